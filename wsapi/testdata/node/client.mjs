// Drives a running Pulse websocket API with the "ws" package from npm.
// Usage: node client.mjs ws://127.0.0.1:7450
// Prints "node client: ok {...}" and exits 0 when every check passed.
import WebSocket from 'ws';

const base = process.argv[2];
if (!base) {
  console.error('usage: node client.mjs ws://host:port');
  process.exit(2);
}
// Guard against a hang; the Go test reports the output either way.
setTimeout(() => { console.error('FAIL: timed out'); process.exit(1); }, 30000).unref();

// Progress lines on stderr, printed by the Go test when the client fails.
const step = (what) => console.error('step: ' + what);

function fail(msg) {
  console.error('FAIL: ' + msg);
  process.exit(1);
}
function check(cond, msg) { if (!cond) fail(msg); }

// open connects and attaches onMessage before the handshake completes: frames
// that arrive with the handshake response are emitted right after 'open'.
function open(url, onMessage) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.on('message', onMessage);
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

// A tiny multiplexing client: replies by id, pushes by sub.
let nextId = 1;
const waiting = new Map();
const pushes = [];
let wake = () => {};
const binPushes = [];
const ws = await open(base + '/v1/ws', (data, isBinary) => {
  if (isBinary) { // a binary push (docs/websocket.md, "Binary pushes")
    binPushes.push(decodeBinaryPush(data));
    wake();
    return;
  }
  const m = JSON.parse(data.toString());
  if (m.id !== undefined && waiting.has(m.id)) {
    waiting.get(m.id)(m);
    waiting.delete(m.id);
  } else if (m.sub !== undefined) {
    pushes.push(m);
    wake();
  }
});
function call(req) {
  const id = nextId++;
  return new Promise((resolve) => {
    waiting.set(id, resolve);
    ws.send(JSON.stringify({ ...req, id }));
  });
}
function until(cond) {
  return new Promise((resolve) => {
    const test = () => { if (cond()) { wake = () => {}; resolve(); } };
    wake = test;
    test();
  });
}

step('create_topic');
let r = await call({ op: 'create_topic', topic: 'from-node', config: { partitions: 2 } });
check(!r.error && r.topic.partitions.length === 2, 'create_topic: ' + JSON.stringify(r));

step('single produce');
r = await call({ op: 'produce', topic: 'from-node', partition: 0, key: 'k', value: { hello: 'node' }, headers: { via: 'ws' } });
check(!r.error && r.partition === 0 && r.offset === 0 && r.timestamp > 0, 'single produce: ' + JSON.stringify(r));

step('batch produce');
const batch = Array.from({ length: 50 }, (_, i) => ({ key: `key-${i % 5}`, value: { i } }));
r = await call({ op: 'produce', topic: 'from-node', records: batch });
check(!r.error && r.acks.length === 50, 'batch produce: ' + JSON.stringify(r));

step('subscribe');
r = await call({ op: 'subscribe', topic: 'from-node', from: 'earliest' });
check(!r.error && r.sub > 0, 'subscribe: ' + JSON.stringify(r));
const sub = r.sub;
const count = () => pushes.filter((p) => p.sub === sub).reduce((n, p) => n + p.records.length, 0);
step('wait for pushes');
await until(() => count() >= 51);

const last = new Map();
let hello = null;
for (const p of pushes.filter((p) => p.sub === sub)) {
  for (const rec of p.records) {
    check(rec.partition === p.partition, 'record partition matches push');
    const prev = last.has(rec.partition) ? last.get(rec.partition) : -1;
    check(rec.offset === prev + 1, `partition ${rec.partition}: offset ${rec.offset} after ${prev}`);
    last.set(rec.partition, rec.offset);
    if (rec.value && rec.value.hello) hello = rec;
  }
}
check(hello && hello.key === 'k' && hello.headers.via === 'ws', 'first record: ' + JSON.stringify(hello));

step('error replies');
r = await call({ op: 'produce', topic: 'a/b', value: 1 });
check(r.error && r.error.code === 'invalid_topic', 'invalid topic: ' + JSON.stringify(r));
r = await call({ op: 'frobnicate' });
check(r.error && r.error.code === 'unknown_op', 'unknown op: ' + JSON.stringify(r));

// binaryProduce encodes a binary produce frame (docs/websocket.md): records
// are {key, value} with strings or Uint8Arrays; a null value is a tombstone.
function binaryProduce(id, topic, records) {
  const enc = new TextEncoder();
  const parts = [enc.encode(JSON.stringify({ op: 'produce', id, topic }) + '\n')];
  const uvarint = (n) => {
    const b = [];
    while (n >= 0x80) { b.push((n % 0x80) | 0x80); n = Math.floor(n / 0x80); }
    b.push(n);
    return Uint8Array.from(b);
  };
  for (const r of records) {
    for (const f of [r.key, r.value]) {
      if (f === undefined || f === null) { parts.push(uvarint(0)); continue; }
      const b = typeof f === 'string' ? enc.encode(f) : f;
      parts.push(uvarint(b.length + 1), b);
    }
    parts.push(uvarint(0)); // no headers
  }
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
}

step('binary produce frame');
{
  const id = nextId++;
  const reply = new Promise((resolve) => waiting.set(id, resolve));
  ws.send(binaryProduce(id, 'bin-node', [{ key: 'k', value: 'x'.repeat(200) }, { value: Uint8Array.from([0xff, 0]) }, { key: 'k', value: null }]));
  r = await reply;
  check(!r.error && r.acks.length === 3 && r.acks[2].offset === 2, 'binary produce: ' + JSON.stringify(r));
}

// decodeBinaryPush decodes a binary push (docs/websocket.md, the same
// decoder): the header's fields and records [{offset, timestamp, key, value,
// headers}], keys and values Uint8Arrays (null: no key, a tombstone).
function decodeBinaryPush(buf) {
  const b = new Uint8Array(buf);
  const nl = b.indexOf(0x0a);
  const push = JSON.parse(new TextDecoder().decode(b.subarray(0, nl)));
  let i = nl + 1;
  const uvarint = () => {
    let n = 0, scale = 1, c;
    do { c = b[i++]; n += (c & 0x7f) * scale; scale *= 0x80; } while (c & 0x80);
    return n;
  };
  const varint = () => { const u = uvarint(); return u % 2 ? -(u + 1) / 2 : u / 2; };
  const bytes = (n) => b.subarray(i, (i += n));
  const field = () => { const n = uvarint(); return n === 0 ? null : bytes(n - 1); };
  push.records = [];
  for (let r = 0; r < push.count; r++) {
    const offset = push.offset + uvarint();
    const timestamp = push.timestamp + varint();
    const key = field(), value = field(), headers = [];
    for (let h = uvarint(); h > 0; h--) {
      const name = new TextDecoder().decode(bytes(uvarint()));
      headers.push([name, bytes(uvarint())]);
    }
    push.records.push({ offset, timestamp, key, value, headers });
  }
  check(i === b.length, `binary push: ${b.length - i} bytes after ${push.count} records`);
  return push;
}

step('binary pushes');
{
  r = await call({ op: 'subscribe', topic: 'bin-node', from: 'earliest', format: 'binary' });
  check(!r.error && r.sub > 0, 'binary subscribe: ' + JSON.stringify(r));
  const bsub = r.sub;
  const recs = () => binPushes.filter((p) => p.sub === bsub).flatMap((p) => p.records);
  await until(() => recs().length >= 3);
  const [a, b, c] = recs();
  const text = new TextDecoder();
  check(a.offset === 0 && b.offset === 1 && c.offset === 2, 'binary push offsets: ' + [a.offset, b.offset, c.offset]);
  check(text.decode(a.key) === 'k' && text.decode(a.value) === 'x'.repeat(200), 'binary push record 0');
  check(b.key === null && b.value.length === 2 && b.value[0] === 0xff && b.value[1] === 0, 'binary push record 1');
  check(text.decode(c.key) === 'k' && c.value === null, 'binary push record 2: a tombstone');
  check(a.timestamp > 0 && b.timestamp >= a.timestamp && c.timestamp >= b.timestamp, 'binary push timestamps');
  r = await call({ op: 'subscribe', topic: 'bin-node', format: 'msgpack' });
  check(r.error && r.error.code === 'invalid_request', 'unknown format: ' + JSON.stringify(r));
}

// The zero-ceremony endpoints.
step('plain produce endpoint');
const acks = [];
const prod = await open(base + '/v1/topics/plain-node/produce', (d) => { acks.push(JSON.parse(d.toString())); wake(); });
prod.send('raw text');
prod.send(Buffer.from([0xff, 0x00, 0x01])); // not UTF-8: comes back as value_b64
await until(() => acks.length >= 2);
check(acks[0].offset === 0 && acks[1].offset === 1, 'plain produce acks: ' + JSON.stringify(acks));

step('tail endpoint');
const frames = [];
const tail = await open(base + '/v1/topics/plain-node/tail?from=earliest', (d) => { frames.push(JSON.parse(d.toString())); wake(); });
await until(() => frames.length >= 2);
check(frames[0].value === 'raw text' && frames[1].value_b64 === '/wAB', 'tail frames: ' + JSON.stringify(frames));

step('close');
const closed = (s) => new Promise((resolve) => s.once('close', resolve));
for (const s of [ws, prod, tail]) { const c = closed(s); s.close(1000, 'done'); await c; }
console.log('node client: ok ' + JSON.stringify({ records: count(), partitions: last.size }));
