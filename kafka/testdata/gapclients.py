#!/usr/bin/python3
"""Python Kafka clients reading past a corrupt or lost range, driven by
kafka/gapclients_test.go:

  gapclients.py LIB ADDR TOPIC OFFSET VALUE

LIB is "confluent" (librdkafka) or "kafkapython". The consumer is assigned
partition 0 of TOPIC at OFFSET (no group) and prints every record it hands
to the application as one line "OFFSET VALUE", until it hands on the record
whose value is VALUE, or fails after 60 s.
"""
import sys
import time


def consume_confluent(addr, topic, start, last):
    from confluent_kafka import Consumer, TopicPartition
    c = Consumer({"bootstrap.servers": addr, "group.id": "pulse-gap-test", "enable.auto.commit": False,
                  "fetch.wait.max.ms": 100})
    c.assign([TopicPartition(topic, 0, start)])
    deadline = time.time() + 60
    while time.time() < deadline:
        m = c.poll(0.5)
        if m is None:
            continue
        if m.error():
            sys.exit("consume error: %s" % m.error())
        print("%d %s" % (m.offset(), m.value().decode()), flush=True)
        if m.value() == last:
            c.close()
            return
    sys.exit("no record %r within 60 s" % last)


def consume_kafkapython(addr, topic, start, last):
    from kafka import KafkaConsumer, TopicPartition
    c = KafkaConsumer(bootstrap_servers=addr, enable_auto_commit=False, fetch_max_wait_ms=100)
    tp = TopicPartition(topic, 0)
    c.assign([tp])
    c.seek(tp, start)
    deadline = time.time() + 60
    while time.time() < deadline:
        for _, msgs in c.poll(timeout_ms=500).items():
            for m in msgs:
                print("%d %s" % (m.offset, m.value.decode()), flush=True)
                if m.value == last:
                    c.close()
                    return
    sys.exit("no record %r within 60 s" % last)


def main():
    lib, addr, topic, start, last = sys.argv[1:6]
    {"confluent": consume_confluent, "kafkapython": consume_kafkapython}[lib](addr, topic, int(start), last.encode())


if __name__ == "__main__":
    main()
