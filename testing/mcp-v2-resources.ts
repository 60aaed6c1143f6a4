// The conformance suite's test resources and prompts (resources-*, prompts-*, completion-complete,
// input-required-result-non-tool-request), written on SDK v2 from the suite's published scenario
// requirements. Part of testing/mcp-v2-server.ts.
import {
  acceptedContent,
  completable,
  inputRequired,
  ResourceTemplate,
  type McpServer,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import { RED_PIXEL_PNG } from './mcp-v2-tools';

const COMPLETIONS = ['paris', 'park', 'party', 'hello', 'help'];

export function registerResources(server: McpServer): void {
  server.registerResource(
    'static-text',
    'test://static-text',
    { description: 'A static text resource', mimeType: 'text/plain' },
    async (uri) => ({
      contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'This is the content of the static text resource.' }],
    }),
  );
  server.registerResource(
    'static-binary',
    'test://static-binary',
    { description: 'A static PNG resource', mimeType: 'image/png' },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'image/png', blob: RED_PIXEL_PNG }] }),
  );
  server.registerResource(
    'watched-resource',
    'test://watched-resource',
    { description: 'A resource clients subscribe to', mimeType: 'text/plain' },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'Watched resource content.' }] }),
  );
  server.registerResource(
    'template-data',
    new ResourceTemplate('test://template/{id}/data', { list: undefined }),
    { description: 'Data for one id', mimeType: 'application/json' },
    async (uri, { id }) => ({
      contents: [
        {
          uri: uri.href,
          mimeType: 'application/json',
          text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }),
        },
      ],
    }),
  );
}

export function registerPrompts(server: McpServer): void {
  server.registerPrompt('test_simple_prompt', { description: 'A prompt without arguments' }, async () => ({
    messages: [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }],
  }));
  server.registerPrompt(
    'test_prompt_with_arguments',
    {
      description: 'A prompt with two arguments',
      argsSchema: z.object({
        arg1: completable(z.string().describe('First test argument'), (value) =>
          COMPLETIONS.filter((c) => c.startsWith(value)),
        ),
        arg2: z.string().describe('Second test argument'),
      }),
    },
    async ({ arg1, arg2 }) => ({
      messages: [
        { role: 'user', content: { type: 'text', text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` } },
      ],
    }),
  );
  server.registerPrompt(
    'test_prompt_with_embedded_resource',
    {
      description: 'A prompt embedding a resource',
      argsSchema: z.object({ resourceUri: z.string().describe('URI of the resource to embed') }),
    },
    async ({ resourceUri }) => ({
      messages: [
        {
          role: 'user',
          content: {
            type: 'resource',
            resource: { uri: resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' },
          },
        },
        { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
      ],
    }),
  );
  server.registerPrompt('test_prompt_with_image', { description: 'A prompt with an image' }, async () => ({
    messages: [
      { role: 'user', content: { type: 'image', data: RED_PIXEL_PNG, mimeType: 'image/png' } },
      { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
    ],
  }));
  server.registerPrompt(
    'test_input_required_result_prompt',
    { description: 'A prompt that first asks which context to use' },
    async (ctx) => {
      const answer = acceptedContent(ctx.mcpReq.inputResponses, 'user_context', z.object({ context: z.string() }));
      if (answer)
        return {
          messages: [{ role: 'user', content: { type: 'text', text: `Use this context: ${answer.context}` } }],
        };
      return inputRequired({
        inputRequests: {
          user_context: inputRequired.elicit({
            message: 'What context should the prompt use?',
            requestedSchema: { type: 'object', properties: { context: { type: 'string' } }, required: ['context'] },
          }),
        },
      });
    },
  );
}
