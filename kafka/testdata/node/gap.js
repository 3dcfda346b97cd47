// kafkajs reading past a corrupt or lost range, driven by kafka/gapclients_test.go:
//   node gap.js ADDR TOPIC GROUP VALUE
// A consumer of GROUP reads TOPIC from the beginning and prints every record
// it hands to eachMessage as one line "OFFSET VALUE", until the record whose
// value is VALUE, or fails after 60 s.
const { Kafka, logLevel } = require('kafkajs')

const [addr, topic, group, last] = process.argv.slice(2)
const kafka = new Kafka({ clientId: 'pulse-gap-test', brokers: [addr], logLevel: logLevel.NOTHING })

async function main () {
  const consumer = kafka.consumer({ groupId: group, maxWaitTimeInMs: 100, sessionTimeout: 10000, heartbeatInterval: 500 })
  await consumer.connect()
  await consumer.subscribe({ topic, fromBeginning: true })
  let done
  const finished = new Promise((resolve) => { done = resolve })
  await consumer.run({
    eachMessage: async ({ message }) => {
      const value = message.value ? message.value.toString() : ''
      process.stdout.write(`${message.offset} ${value}\n`)
      if (value === last) done()
    },
  })
  const timer = setTimeout(() => { console.error(`no record ${last} within 60 s`); process.exit(1) }, 60000)
  await finished
  clearTimeout(timer)
  await consumer.disconnect()
}

main().catch((e) => { console.error(e); process.exit(1) })
