// What SDK v2's Client hands back, as the shared reader (observed.ts, which the gateway's 2025
// relay also feeds with SDK v1 errors and types) knows it. Errors: the SDK v1 equivalent. Structured fields only: the
// status of an SdkHttpError, the numeric code of a ProtocolError, the SdkErrorCode of a local
// failure. An `input_required` answer the client was not set up to fulfil is no error of the
// server's: it is reported as the server's request for input (docs/api.md `resultType`).
import { UnauthorizedError as V1UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import {
  InsufficientScopeError,
  ProtocolError,
  ProtocolErrorCode,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  UnauthorizedError,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/client';
import { fromResult } from './observed';

type V1Result = Parameters<typeof fromResult>[0];
type V1Tool = Parameters<typeof fromResult>[1];

/** `fromResult` for a v2 result and tool (the same wire shapes, typed by the other SDK). */
export function fromV2Result(result: CallToolResult, tool: Tool | undefined, httpStatus: number | null) {
  return fromResult(result as V1Result, tool as V1Tool, httpStatus);
}

/** The SDK v1 equivalent of a v2 error, for `fromError`; anything else as it is. */
export function asObservable(error: unknown): unknown {
  if (error instanceof ProtocolError) return new McpError(error.code, error.message);
  // Refused while connecting (401, or 403 insufficient_scope): the status and challenge are the
  // trace's, which `fromError` reads for an unauthorized error.
  if (error instanceof UnauthorizedError || error instanceof InsufficientScopeError)
    return new V1UnauthorizedError(error.message);
  if (error instanceof SdkHttpError) {
    const status = typeof error.data?.status === 'number' ? error.data.status : undefined;
    return new StreamableHTTPError(status, error.message);
  }
  if (error instanceof SdkError) {
    if (error.code === SdkErrorCode.RequestTimeout) return new McpError(ErrorCode.RequestTimeout, error.message);
    if (error.code === SdkErrorCode.ConnectionClosed) return new McpError(ErrorCode.ConnectionClosed, error.message);
  }
  return error;
}

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
