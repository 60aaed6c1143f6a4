// The conformance suite's 2026-07-28 test tools (input-required-result-*, server-stateless,
// http-custom-header-server-validation), written on SDK v2 from the suite's published scenario
// requirements: multi round-trip results, integrity-protected requestState, the diagnostic tools
// server-stateless calls, and a tool whose argument is mirrored into an Mcp-Param header. Part
// of testing/mcp-v2-server.ts.
import { randomBytes } from 'node:crypto';
import {
  acceptedContent,
  createRequestStateCodec,
  fromJsonSchema,
  inputRequired,
  inputResponse,
  type ClientCapabilities,
  type InputRequests,
  type McpServer,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { z } from 'zod';

/** What a round proved, carried to the next one (signed, so a client cannot forge progress). */
export interface RoundState {
  tool: string;
  round: number;
  name?: string;
}

// One key per process: every instance the factory builds verifies what another one minted.
export const stateCodec = createRequestStateCodec<RoundState>({ key: randomBytes(32), ttlSeconds: 600 });

/** Change notifications, published however the serving entry delivers them. */
export interface ListChanges {
  tools(): void;
  prompts(): void;
}

const text = (t: string) => ({ content: [{ type: 'text' as const, text: t }] });
const named = z.object({ name: z.string() });
const asking = (message: string, field: string) =>
  inputRequired.elicit({
    message,
    requestedSchema: { type: 'object', properties: { [field]: { type: 'string' } }, required: [field] },
  });
const confirm = () =>
  inputRequired.elicit({
    message: 'Please confirm',
    requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
  });
const capitalQuestion = () =>
  inputRequired.createMessage({
    messages: [{ role: 'user', content: { type: 'text', text: 'What is the capital of France?' } }],
    maxTokens: 100,
  });

/** The sampled text of the answer under `key`, or null while unanswered. */
function sampled(ctx: ServerContext, key: string): string | null {
  const view = inputResponse(ctx.mcpReq.inputResponses, key);
  if (view.kind !== 'sampling') return null;
  const block = Array.isArray(view.result.content) ? view.result.content[0] : view.result.content;
  return block?.type === 'text' ? block.text : JSON.stringify(block);
}

/** The roots the client listed under `key`, or null while unanswered. */
function rootsOf(ctx: ServerContext, key: string): string[] | null {
  const view = inputResponse(ctx.mcpReq.inputResponses, key);
  return view.kind === 'roots' ? view.roots.map((r) => r.uri) : null;
}

export function registerRoundTools(
  server: McpServer,
  changes: ListChanges,
  capabilities: (ctx: ServerContext) => ClientCapabilities | undefined,
): void {
  server.registerTool(
    'test_input_required_result_elicitation',
    { description: 'Asks for a name, then greets' },
    async (ctx) => {
      const answer = acceptedContent(ctx.mcpReq.inputResponses, 'user_name', named);
      if (answer) return text(`Hello, ${answer.name}!`);
      return inputRequired({ inputRequests: { user_name: asking('What is your name?', 'name') } });
    },
  );
  server.registerTool(
    'test_input_required_result_sampling',
    { description: 'Asks the client to sample' },
    async (ctx) => {
      const answer = sampled(ctx, 'capital_question');
      if (answer !== null) return text(`Sampling response: ${answer}`);
      return inputRequired({ inputRequests: { capital_question: capitalQuestion() } });
    },
  );
  server.registerTool(
    'test_input_required_result_list_roots',
    { description: "Asks for the client's roots" },
    async (ctx) => {
      const roots = rootsOf(ctx, 'client_roots');
      if (roots) return text(`Client roots: ${roots.join(', ') || '(none)'}`);
      return inputRequired({ inputRequests: { client_roots: inputRequired.listRoots() } });
    },
  );
  server.registerTool(
    'test_input_required_result_request_state',
    { description: 'Carries state across a round' },
    async (ctx) => {
      const state = ctx.mcpReq.requestState<RoundState>();
      const ok = acceptedContent(ctx.mcpReq.inputResponses, 'confirm', z.object({ ok: z.boolean() }));
      if (state?.tool === 'request_state' && ok) return text(`state-ok: confirmed=${ok.ok}`);
      return inputRequired({
        inputRequests: { confirm: confirm() },
        requestState: await stateCodec.mint({ tool: 'request_state', round: 1 }),
      });
    },
  );
  server.registerTool(
    'test_input_required_result_tampered_state',
    { description: 'Signs its requestState' },
    async (ctx) => {
      // A tampered state never reaches this handler: the codec's verify refuses it with -32602.
      if (ctx.mcpReq.requestState<RoundState>()?.tool === 'tampered_state') return text('state verified');
      return inputRequired({
        inputRequests: { confirm: confirm() },
        requestState: await stateCodec.mint({ tool: 'tampered_state', round: 1 }),
      });
    },
  );
  server.registerTool(
    'test_input_required_result_multiple_inputs',
    { description: 'Asks three things at once' },
    async (ctx) => {
      const name = acceptedContent(ctx.mcpReq.inputResponses, 'user_name', named);
      const greeting = sampled(ctx, 'greeting');
      const roots = rootsOf(ctx, 'client_roots');
      const state = ctx.mcpReq.requestState<RoundState>();
      if (state?.tool === 'multiple_inputs' && name && greeting !== null && roots)
        return text(`All inputs received: name=${name.name}, greeting=${greeting}, roots=${roots.length}`);
      const requests: InputRequests = {};
      if (!name) requests.user_name = asking('What is your name?', 'name');
      if (greeting === null)
        requests.greeting = inputRequired.createMessage({
          messages: [{ role: 'user', content: { type: 'text', text: 'Generate a greeting' } }],
          maxTokens: 50,
        });
      if (!roots) requests.client_roots = inputRequired.listRoots();
      return inputRequired({
        inputRequests: requests,
        requestState: await stateCodec.mint({ tool: 'multiple_inputs', round: 1 }),
      });
    },
  );
  server.registerTool(
    'test_input_required_result_multi_round',
    { description: 'Two questions, one after the other' },
    async (ctx) => {
      const state = ctx.mcpReq.requestState<RoundState>();
      const at = state?.tool === 'multi_round' ? state.round : 0;
      const step1 = acceptedContent(ctx.mcpReq.inputResponses, 'step1', named);
      const step2 = acceptedContent(ctx.mcpReq.inputResponses, 'step2', z.object({ color: z.string() }));
      if (at === 2 && step2) return text(`Done: ${state?.name} likes ${step2.color}`);
      if (at >= 1 && step1)
        return inputRequired({
          inputRequests: { step2: asking('Step 2: What is your favorite color?', 'color') },
          requestState: await stateCodec.mint({ tool: 'multi_round', round: 2, name: step1.name }),
        });
      return inputRequired({
        inputRequests: { step1: asking('Step 1: What is your name?', 'name') },
        requestState: await stateCodec.mint({ tool: 'multi_round', round: 1 }),
      });
    },
  );
  server.registerTool(
    'test_input_required_result_capabilities',
    { description: 'Asks only for what the client declared it can answer' },
    async (ctx) => {
      const declared = capabilities(ctx) ?? {};
      const answered =
        sampled(ctx, 'capital_question') ?? acceptedContent(ctx.mcpReq.inputResponses, 'user_name', named)?.name;
      if (answered) return text(`Answered: ${answered}`);
      const requests: InputRequests = {};
      if (declared.sampling) requests.capital_question = capitalQuestion();
      if (declared.elicitation) requests.user_name = asking('What is your name?', 'name');
      if (Object.keys(requests).length === 0) return text('The client declared nothing to ask with');
      return inputRequired({ inputRequests: requests });
    },
  );
  // server-stateless: a request that needs sampling from a client that did not declare it (-32021).
  server.registerTool('test_missing_capability', { description: 'Needs the sampling capability' }, async (ctx) => {
    const answer = sampled(ctx, 'capital_question');
    if (answer !== null) return text(`Sampling response: ${answer}`);
    return inputRequired({ inputRequests: { capital_question: capitalQuestion() } });
  });
  server.registerTool('test_streaming_elicitation', { description: 'Asks for a name in-band' }, async (ctx) => {
    const answer = acceptedContent(ctx.mcpReq.inputResponses, 'user_name', named);
    if (answer) return text(`Hello, ${answer.name}!`);
    return inputRequired({ inputRequests: { user_name: asking('What is your name?', 'name') } });
  });
  server.registerTool(
    'test_logging_tool',
    { description: 'Logs one line (only at a level the request set)' },
    async (ctx) => {
      await ctx.mcpReq.log('info', 'test_logging_tool ran');
      return text('logged');
    },
  );
  server.registerTool('test_trigger_tool_change', { description: 'Announces that the tool list changed' }, async () => {
    changes.tools();
    return text('tools changed');
  });
  server.registerTool(
    'test_trigger_prompt_change',
    { description: 'Announces that the prompt list changed' },
    async () => {
      changes.prompts();
      return text('prompts changed');
    },
  );
  server.registerTool(
    'test_header_param',
    {
      description: 'Echoes a region that the client also sends as the Mcp-Param-Region header',
      inputSchema: fromJsonSchema<{ region: string }>({
        type: 'object',
        properties: { region: { type: 'string', 'x-mcp-header': 'Region' } },
        required: ['region'],
      } as Parameters<typeof fromJsonSchema>[0]),
    },
    async ({ region }) => text(`region=${region}`),
  );
}
