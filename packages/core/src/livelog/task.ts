// The operation task of a livelog tool call: the monitor with the real OpenAI-compatible detector,
// its API key read from the server's environment when the monitor starts (so a key set or rotated
// later is used by the next call), and alerts raised on the operation.
import type { LivelogSettings } from '../definition/livelog-settings.js';
import type { Logger } from '../logger.js';
import type { OperationManager, OperationTask } from '../operations/operations.js';
import type { Executor } from '../process/executor.js';
import { openAiDetector, type Detector } from './detector.js';
import { runLivelog } from './monitor.js';

export interface LivelogTaskOptions {
  readonly executor: Executor;
  readonly operations: OperationManager;
  readonly settings: LivelogSettings;
  readonly cwd: string;
  readonly timeoutMs?: number | undefined;
  /** R15.2: the call's output budget (`max_output_tokens`); default the server's. */
  readonly maxOutputTokens?: number | undefined;
  /** Where the API key variable is looked up: the server's environment. */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly logger?: Logger | undefined;
  /** Another detector than the settings' endpoint (tests). */
  readonly detector?: Detector;
}

export function livelogTask(options: LivelogTaskOptions): OperationTask {
  const { settings } = options;
  return (signal, id) => {
    const variable = settings.apiKeyVariable;
    const apiKey = variable === undefined ? undefined : options.env[variable];
    if (variable !== undefined && (apiKey === undefined || apiKey === '')) {
      options.logger?.warn(
        `livelog ${id}: ${variable} is not set; requests to ${settings.baseUrl} carry no API key`,
      );
    }
    const detector =
      options.detector ??
      openAiDetector({
        baseUrl: settings.baseUrl,
        model: settings.model,
        detectionPrompt: settings.detectionPrompt,
        apiKey,
        timeoutMs: settings.llmTimeoutSeconds * 1000,
      });
    return runLivelog({
      executor: options.executor,
      settings,
      cwd: options.cwd,
      timeoutMs: options.timeoutMs,
      maxOutputTokens: options.maxOutputTokens,
      signal,
      logName: id,
      detector,
      alert: (summary, detail) => options.operations.alert(id, summary, detail),
      logger: options.logger,
    });
  };
}
