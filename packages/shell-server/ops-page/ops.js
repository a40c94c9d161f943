// Ahma's operations page in the browser. Commands control what they print, so their output, and
// every other value from the server, only ever reaches the page as text (textContent, never
// innerHTML); the server's Content-Security-Policy runs no inline script either way.
'use strict';

/** Output kept per operation in the page; older text scrolls away (the whole output is a click). */
const MAX_OUTPUT_CHARS = 200_000;

const state = {
  /** The latest list, by id, and when it arrived (elapsed times move on from there). */
  operations: new Map(),
  order: [],
  receivedAt: 0,
  /** Live output of the operations seen running, by id. */
  output: new Map(),
  selected: undefined,
};

const table = document.querySelector('#operations tbody');
const empty = document.getElementById('empty');
const detail = document.getElementById('detail');
const detailTitle = document.getElementById('detail-title');
const outputView = document.getElementById('output');
const connection = document.getElementById('connection');

function formatElapsed(ms) {
  const seconds = Math.floor(ms / 1000);
  if (seconds < 60) return `${String(seconds)} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${String(minutes)} min ${String(seconds % 60)} s`;
  return `${String(Math.floor(minutes / 60))} h ${String(minutes % 60)} min`;
}

function quoteWord(word) {
  return /^[\w@%+=:,./-]+$/u.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

function describeStatus(operation) {
  if (operation.queued !== undefined && operation.queued !== null) {
    return `queued #${String(operation.queued.position)} (behind ${operation.queued.behind})`;
  }
  if (operation.status === 'running') {
    return operation.step === undefined || operation.step === null
      ? 'running'
      : `running step ${String(operation.step)}`;
  }
  if (operation.exitCode !== undefined && operation.exitCode !== null) {
    return `${operation.status} (exit ${String(operation.exitCode)})`;
  }
  if (operation.signal) return `${operation.status} (${operation.signal})`;
  return operation.status;
}

function cell(row, text, className) {
  const td = document.createElement('td');
  td.textContent = text;
  if (className !== undefined) td.className = className;
  row.append(td);
  return td;
}

function render() {
  const now = Date.now();
  table.replaceChildren();
  empty.hidden = state.order.length > 0;
  for (const id of state.order) {
    const operation = state.operations.get(id);
    const row = document.createElement('tr');
    row.dataset.id = id;
    row.setAttribute('aria-selected', String(id === state.selected));
    row.addEventListener('click', () => select(id));
    cell(row, id, 'id');
    cell(row, operation.tool, 'tool');
    cell(row, (operation.argv ?? []).map(quoteWord).join(' '), 'command');
    const status = cell(row, describeStatus(operation), 'status');
    status.dataset.status = operation.status;
    status.dataset.queued = String(operation.queued !== undefined && operation.queued !== null);
    const running = operation.status === 'running';
    cell(
      row,
      formatElapsed(operation.elapsedMs + (running ? now - state.receivedAt : 0)),
      'elapsed',
    );
    const actions = cell(row, '', 'actions');
    if (running) {
      const button = document.createElement('button');
      button.type = 'button';
      button.className = 'cancel';
      button.textContent = 'cancel';
      button.addEventListener('click', (event) => {
        event.stopPropagation();
        void cancel(id, button);
      });
      actions.append(button);
    }
    table.append(row);
  }
  renderDetail();
}

function renderDetail() {
  const operation = state.selected === undefined ? undefined : state.operations.get(state.selected);
  detail.hidden = operation === undefined;
  if (operation === undefined) return;
  detailTitle.textContent = `${operation.id} — ${describeStatus(operation)}`;
  const text = state.output.get(operation.id) ?? '';
  if (outputView.textContent !== text) {
    const atEnd = outputView.scrollTop + outputView.clientHeight >= outputView.scrollHeight - 4;
    outputView.textContent = text;
    if (atEnd) outputView.scrollTop = outputView.scrollHeight;
  }
}

function select(id) {
  state.selected = id;
  render();
}

function appendOutput(id, text) {
  const kept = (state.output.get(id) ?? '') + text;
  state.output.set(id, kept.length > MAX_OUTPUT_CHARS ? kept.slice(-MAX_OUTPUT_CHARS) : kept);
  if (state.selected === undefined) state.selected = id;
  if (id === state.selected) renderDetail();
}

async function cancel(id, button) {
  button.disabled = true;
  const response = await fetch('/ops/api/cancel', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ id }),
  });
  if (!response.ok) {
    button.disabled = false;
    button.title = await response.text();
  }
}

/** The output API's largest window (the `output` tool's), and how much of the end is shown. */
const WINDOW_BYTES = 32_000;
const SHOWN_BYTES = 512_000;

/** One window of the whole output, read on the server by the same reader as the `output` tool. */
async function readWindow(id, offset, length) {
  const response = await fetch(
    `/ops/api/output?id=${encodeURIComponent(id)}&offset=${String(offset)}&length=${String(length)}`,
  );
  const body = await response.json();
  if (!response.ok)
    throw new Error(body.error ?? `the output could not be read (${String(response.status)})`);
  return body;
}

/** The whole output (its last SHOWN_BYTES when longer), window by window. */
async function showFullOutput() {
  const id = state.selected;
  if (id === undefined) return;
  try {
    const last = await readWindow(id, -WINDOW_BYTES, WINDOW_BYTES);
    const from = Math.max(0, last.total_bytes - SHOWN_BYTES);
    const parts = [];
    for (let offset = from; offset < last.start; offset += WINDOW_BYTES) {
      const window = await readWindow(id, offset, Math.min(WINDOW_BYTES, last.start - offset));
      parts.push(window.text);
    }
    parts.push(last.text);
    const cut = from > 0 ? `[the first ${String(from)} bytes are not shown]\n` : '';
    state.output.set(id, cut + parts.join(''));
  } catch (error) {
    state.output.set(id, String(error.message));
  }
  renderDetail();
}

document.getElementById('full-output').addEventListener('click', () => void showFullOutput());

function connect() {
  const events = new EventSource('/ops/api/events');
  events.addEventListener('open', () => {
    connection.dataset.state = 'open';
    connection.textContent = 'live';
  });
  events.addEventListener('error', () => {
    connection.dataset.state = 'closed';
    connection.textContent = 'disconnected — retrying';
  });
  events.addEventListener('operations', (event) => {
    const { operations } = JSON.parse(event.data);
    state.operations = new Map(operations.map((operation) => [operation.id, operation]));
    state.order = operations.map((operation) => operation.id);
    state.receivedAt = Date.now();
    render();
  });
  events.addEventListener('output', (event) => {
    const { id, text } = JSON.parse(event.data);
    appendOutput(id, text);
  });
}

// Elapsed times move on between lists.
setInterval(() => {
  for (const td of table.querySelectorAll('td.elapsed')) {
    const operation = state.operations.get(td.parentElement.dataset.id);
    if (operation?.status === 'running') {
      td.textContent = formatElapsed(operation.elapsedMs + Date.now() - state.receivedAt);
    }
  }
}, 1000);

connect();
