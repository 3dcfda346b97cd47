// kafkajs driven by kafka/kafkajs_test.go:
//   node kafkajs.js produce ADDR TOPIC TAG N     (admin creates TOPIC with 3 partitions first)
//   node kafkajs.js consume ADDR TOPIC GROUP N
//   node kafkajs.js grow ADDR TOPIC _ N          (admin.createPartitions to N; one line per partition after)
//   node kafkajs.js deletegroup ADDR _ GROUP _   (admin.deleteGroups; one line, value = the error type or "ok")
// Records are printed as JSON lines with hex-encoded key, value and headers.
const { Kafka, CompressionTypes, logLevel, Partitioners } = require('kafkajs')

const [mode, addr, topic, arg, nStr] = process.argv.slice(2)
const n = parseInt(nStr, 10)
const kafka = new Kafka({ clientId: 'pulse-test', brokers: [addr], logLevel: logLevel.NOTHING, retry: { retries: 3 } })
const hex = (b) => (b ? Buffer.from(b).toString('hex') : '')
const line = (topic, partition, key, value, headers) => JSON.stringify({
  topic, partition, key: hex(key), value: hex(value),
  headers: Object.entries(headers || {}).map(([k, v]) => [k, hex(v)]),
})

async function produce () {
  const admin = kafka.admin()
  await admin.connect()
  const topics = await admin.listTopics()
  if (!topics.includes(topic)) {
    await admin.createTopics({ topics: [{ topic, numPartitions: 3 }], waitForLeaders: true })
  }
  await admin.disconnect()
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner })
  await producer.connect()
  for (const [codec, compression] of [['none', CompressionTypes.None], ['gzip', CompressionTypes.GZIP]]) {
    const messages = []
    for (let i = 0; i < n; i++) {
      const tag = arg + codec
      messages.push({
        key: Buffer.from(`${tag}-key-${i % 7}`),
        value: Buffer.concat([Buffer.from(`${tag} value ${i} `), Buffer.from([0, 255])]),
        headers: { h1: Buffer.from(`v${i}`), empty: Buffer.alloc(0) },
      })
    }
    const meta = await producer.send({ topic, acks: -1, compression, messages })
    // kafkajs reports one base offset per partition: recompute each record's partition from it.
    const parts = new Map(meta.map((m) => [m.partition, m]))
    if (parts.size === 0) throw new Error('no record metadata')
    for (const m of messages) process.stdout.write(line(topic, -1, m.key, m.value, m.headers) + '\n')
  }
  await producer.disconnect()
}

async function consume () {
  const consumer = kafka.consumer({ groupId: arg, sessionTimeout: 10000, heartbeatInterval: 500 })
  await consumer.connect()
  await consumer.subscribe({ topic, fromBeginning: true })
  let got = 0
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`consumed ${got} of ${n}`)), 90000)
    consumer.run({
      autoCommit: true,
      eachMessage: async ({ topic, partition, message }) => {
        process.stdout.write(line(topic, partition, message.key, message.value, message.headers) + '\n')
        if (++got >= n) { clearTimeout(timer); resolve() }
      },
    }).catch(reject)
  })
  await consumer.commitOffsets([]).catch(() => {})
  await consumer.disconnect()
}

async function grow () {
  const admin = kafka.admin()
  await admin.connect()
  await admin.createPartitions({ topicPartitions: [{ topic, count: n }] })
  const md = await admin.fetchTopicMetadata({ topics: [topic] })
  for (const p of md.topics[0].partitions) process.stdout.write(line(topic, p.partitionId, null, null, {}) + '\n')
  await admin.disconnect()
}

async function deleteGroup () {
  const admin = kafka.admin()
  await admin.connect()
  let outcome = 'ok'
  try {
    await admin.deleteGroups([arg])
  } catch (e) {
    outcome = (e.groups && e.groups[0] && e.groups[0].error && e.groups[0].error.type) || String(e)
  }
  process.stdout.write(line('', 0, null, Buffer.from(outcome), {}) + '\n')
  await admin.disconnect()
}

const modes = { produce, consume, grow, deletegroup: deleteGroup }
modes[mode]().then(() => process.exit(0), (e) => {
  process.stderr.write(String(e && e.stack || e) + '\n')
  process.exit(1)
})
