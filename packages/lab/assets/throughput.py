#!/usr/bin/env python3
"""Throughput through the lab, run inside the client namespace (informational: veths are not NICs).

    throughput.py VIP SECONDS STREAMS MBYTES
Prints one JSON object: connections/s (new TCP connection + GET / + close, 8 threads), upload
Gbit/s (POST /sink: client -> router -> directors (GUE) -> proxies) and download Gbit/s
(GET /bytes/N: proxies -> client directly, DSR), each over STREAMS parallel connections.
"""
import http.client
import json
import sys
import threading
import time

vip, seconds, streams, mbytes = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])


def conns_per_second():
    done = [0] * 8
    stop = time.monotonic() + seconds

    def worker(i):
        while time.monotonic() < stop:
            c = http.client.HTTPConnection(vip, 80, timeout=5)
            c.request("GET", "/")
            c.getresponse().read()
            c.close()
            done[i] += 1

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(done) / (time.monotonic() - start)


def parallel(fn):
    total = [0] * streams
    threads = [threading.Thread(target=lambda i=i: total.__setitem__(i, fn())) for i in range(streams)]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(total) * 8 / (time.monotonic() - start) / 1e9


def upload():
    body = b"u" * (mbytes << 20)
    c = http.client.HTTPConnection(vip, 80, timeout=60)
    c.request("POST", "/sink", body=body)
    got = int(c.getresponse().read())
    c.close()
    assert got == len(body), (got, len(body))
    return got


def download():
    c = http.client.HTTPConnection(vip, 80, timeout=60)
    c.request("GET", f"/bytes/{mbytes << 20}")
    r = c.getresponse()
    n = 0
    while True:
        chunk = r.read(1 << 20)
        if not chunk:
            break
        n += len(chunk)
    c.close()
    assert n == mbytes << 20
    return n


print(json.dumps({"connections_per_s": round(conns_per_second(), 1),
                  "upload_gbit_s": round(parallel(upload), 3),
                  "download_gbit_s": round(parallel(download), 3),
                  "streams": streams, "mbytes_per_stream": mbytes}))
