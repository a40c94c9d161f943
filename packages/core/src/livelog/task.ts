// The operation task of a livelog tool call: the monitor with the real OpenAI-compatible detector,
// its API key read from the server's environment when the monitor starts (so a key set or rotated
// later is used by the next call), and alerts raised on the operation.
import type { LivelogSettings } from '../definition/livelog-settings.js';
import type { Logger } from '../logger.js';
import type { OperationManager, OperationTask } from '../operations/operations.js';
import type { ExecutionResult } from '../process/execution-types.js';
import type { Executor } from '../process/executor.js';
import { openAiDetector, type Detector } from './detector.js';
import { runLivelog, type LivelogRun } from './monitor.js';
import type { LivelogStart } from './start.js';

export interface LivelogTaskOptions {
  readonly executor: Executor;
  readonly operations: OperationManager;
  readonly settings: LivelogSettings;
  /** What this call runs (resolveLivelogStart with the call's arguments). */
  readonly start: LivelogStart;
  readonly cwd: string;
  readonly timeoutMs?: number | undefined;
  /** R15.2: the call's output budget (`max_output_tokens`); default the server's. */
  readonly maxOutputTokens?: number | undefined;
  /** Where the API key variable is looked up: the server's environment. */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly logger?: Logger | undefined;
  /** Another detector than the settings' endpoint (tests). */
  readonly detector?: Detector;
  /** R7.15–R7.17: the file's network mode and who calls (as for any command). */
  readonly network?: LivelogRun['network'];
  readonly caller?: LivelogRun['caller'];
  /** Sees the clear run's result, with the operation id (the server audits it). */
  readonly onClear?:
    ((argv: readonly string[], result: ExecutionResult, operationId: string) => void) | undefined;
}

export function livelogTask(options: LivelogTaskOptions): OperationTask {
  const { settings, start } = options;
  return (signal, id) => {
    const variable = settings.apiKeyVariable;
    const apiKey = variable === undefined ? undefined : options.env[variable];
    if (variable !== undefined && (apiKey === undefined || apiKey === '')) {
      options.logger?.warn(
        `livelog ${id}: ${variable} is not set; requests to ${start.baseUrl} carry no API key`,
      );
    }
    const detector =
      options.detector ??
      openAiDetector({
        baseUrl: start.baseUrl,
        model: start.model,
        detectionPrompt: settings.detectionPrompt,
        apiKey,
        timeoutMs: settings.llmTimeoutSeconds * 1000,
      });
    return runLivelog({
      executor: options.executor,
      settings,
      start,
      cwd: options.cwd,
      timeoutMs: options.timeoutMs,
      maxOutputTokens: options.maxOutputTokens,
      signal,
      logName: id,
      detector,
      alert: (summary, detail) => options.operations.alert(id, summary, detail),
      logger: options.logger,
      onClear: (argv, result) => options.onClear?.(argv, result, id),
      network: options.network,
      caller: options.caller,
    });
  };
}
