#!/usr/bin/python3
"""Kafka clients nobody at Pulse wrote, driven by kafka/clients_test.go.

  clients.py produce LIB ADDR TOPIC TAG CODEC N
  clients.py consume LIB ADDR TOPIC GROUP N
  clients.py transactional confluent ADDR TIMEOUT_S

LIB is "confluent" (librdkafka) or "kafkapython". Every record produced or
consumed is printed as one JSON line with hex-encoded key, value and headers.
transactional prints one JSON line: how init_transactions ended.
"""
import json
import sys
import time


def rec_line(topic, partition, key, value, headers):
    return json.dumps({
        "topic": topic, "partition": partition,
        "key": (key or b"").hex(), "key_null": key is None,
        "value": (value or b"").hex(),
        "headers": [[k, (v or b"").hex()] for k, v in (headers or [])],
    })


def records(tag, n, with_headers=True):
    for i in range(n):
        key = ("%s-key-%d" % (tag, i % 7)).encode()
        value = ("%s value %d " % (tag, i)).encode() + b"\x00\xff"
        headers = [("h1", ("v%d" % i).encode()), ("empty", b"")] if with_headers else None
        yield key, value, headers


def produce_confluent(addr, topic, tag, codec, n):
    from confluent_kafka import Producer
    p = Producer({"bootstrap.servers": addr, "compression.type": codec, "enable.idempotence": True,
                  "partitioner": "murmur2_random", "acks": "all", "linger.ms": 5})
    out = []

    def done(headers):
        def report(err, msg):
            if err is not None:
                sys.exit("delivery failed: %s" % err)
            out.append(rec_line(msg.topic(), msg.partition(), msg.key(), msg.value(), headers))
        return report

    for key, value, headers in records(tag, n):
        p.produce(topic, value=value, key=key, headers=headers, on_delivery=done(headers))
    if p.flush(60) != 0:
        sys.exit("flush timed out")
    print("\n".join(out))


def produce_kafkapython(addr, topic, tag, codec, n, **kw):
    from kafka import KafkaProducer
    p = KafkaProducer(bootstrap_servers=addr, compression_type=None if codec == "none" else codec, acks="all", **kw)
    hdrs = "api_version" not in kw
    futs = [p.send(topic, value=v, key=k, headers=h) for k, v, h in records(tag, n, hdrs)]
    p.flush(60)
    for (k, v, h), f in zip(records(tag, n, hdrs), futs):
        md = f.get(timeout=60)
        print(rec_line(md.topic, md.partition, k, v, h))
    p.close()


def consume_confluent(addr, topic, group, n):
    from confluent_kafka import Consumer
    c = Consumer({"bootstrap.servers": addr, "group.id": group, "auto.offset.reset": "earliest",
                  "enable.auto.commit": False})
    c.subscribe([topic])
    got, deadline = 0, time.time() + 90
    while got < n and time.time() < deadline:
        m = c.poll(1.0)
        if m is None:
            continue
        if m.error():
            sys.exit("consume error: %s" % m.error())
        print(rec_line(m.topic(), m.partition(), m.key(), m.value(), m.headers()))
        got += 1
    c.commit(asynchronous=False)
    c.close()


def consume_kafkapython(addr, topic, group, n):
    from kafka import KafkaConsumer
    c = KafkaConsumer(topic, bootstrap_servers=addr, group_id=group, auto_offset_reset="earliest",
                      enable_auto_commit=False)
    got, deadline = 0, time.time() + 90
    while got < n and time.time() < deadline:
        for _, msgs in c.poll(timeout_ms=1000).items():
            for m in msgs:
                print(rec_line(m.topic, m.partition, m.key, m.value, m.headers))
                got += 1
    c.commit()
    c.close()


def transactional_confluent(addr, timeout):
    from confluent_kafka import KafkaException, Producer
    p = Producer({"bootstrap.servers": addr, "transactional.id": "pulse-test-tx",
                  "logger": lambda *a: None})
    try:
        p.init_transactions(timeout)
        print(json.dumps({"error": None}))
    except KafkaException as e:
        err = e.args[0]
        print(json.dumps({"error": err.name(), "fatal": err.fatal(), "retriable": err.retriable()}))


def main():
    mode, lib = sys.argv[1], sys.argv[2]
    args = sys.argv[3:]
    if mode == "produce":
        addr, topic, tag, codec, n = args
        if lib == "kafkapython-0.10":
            # Produce v2 with v1 message sets, as a 0.10 client sends them
            # (no headers in that format).
            produce_kafkapython(addr, topic, tag, codec, int(n), api_version=(0, 10, 0))
            return
        {"confluent": produce_confluent, "kafkapython": produce_kafkapython}[lib](addr, topic, tag, codec, int(n))
    elif mode == "consume":
        addr, topic, group, n = args
        {"confluent": consume_confluent, "kafkapython": consume_kafkapython}[lib](addr, topic, group, int(n))
    elif mode == "transactional" and lib == "confluent":
        addr, timeout = args
        transactional_confluent(addr, float(timeout))
    else:
        sys.exit("unknown mode " + mode)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
