// What SDK v2's Client hands back beyond a result or an error `fromError` reads (observed.ts): an
// `input_required` answer the client was not set up to fulfil is no error of the server's: it is
// reported as the server's request for input (docs/api.md `resultType`).
import { ProtocolError, ProtocolErrorCode, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';

/**
 * Whether the server answered `input_required` and the client did not fulfil it: auto-fulfilment
 * off (the SDK's typed error), no handler for what was asked, or the round cap reached.
 */
export function isInputRequired(error: unknown): boolean {
  if (!(error instanceof SdkError)) return false;
  if (error.code === SdkErrorCode.InputRequiredRoundsExceeded) return true;
  const data = error.data as { resultType?: unknown } | undefined;
  return error.code === SdkErrorCode.UnsupportedResultType && data?.resultType === 'input_required';
}

/**
 * The error SDK v2's own `callTool` throws for a result whose structured content breaks the
 * tool's declared output schema (-32602) or is missing (-32600), for the caller's logs:
 * observe.ts checks the schema itself (fromResult) and has the SDK let the result through.
 */
export function outputCheckError(name: string, outputValidation: string | null | undefined): ProtocolError | undefined {
  if (outputValidation === 'invalid')
    return new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `Structured content does not match the tool's output schema (${name})`,
    );
  if (outputValidation === 'missing')
    return new ProtocolError(
      ProtocolErrorCode.InvalidRequest,
      `Tool ${name} has an output schema but did not return structured content`,
    );
  return undefined;
}
