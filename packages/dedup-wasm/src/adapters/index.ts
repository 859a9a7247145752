/**
 * Drop-in protection for agent stacks: {@link monitorStream} for any stream of model output and
 * {@link createToolCallMonitor} for tool-call loops. (The Vercel AI SDK middleware is the
 * `dedup-wasm/ai-sdk` subpath.)
 * @module
 */
export { monitorStream, type MonitorStreamOptions } from './monitor-stream.js';
export { RepetitionAbortError, type StreamChannel } from './abort-error.js';
export { defaultChunkText, type ChunkText, type ChannelText } from './chunk-text.js';
export {
  createToolCallMonitor,
  TOOL_CALL_DEFAULTS,
  type ToolCall,
  type ToolCallCycleCall,
  type ToolCallEvidence,
  type ToolCallMonitor,
  type ToolCallMonitorOptions,
  type ToolCallVerdict,
} from './toolcalls.js';
