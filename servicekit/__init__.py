"""The service platform both services stand on: gRPC server, auth, errors, logs, metrics, NATS.

- :mod:`servicekit.server`: a grpc.aio server with health, reflection and a graceful stop.
- :mod:`servicekit.auth`: signed bearer tokens and the authenticating interceptor.
- :mod:`servicekit.errors`: the application's error families (plain Python, no gRPC).
- :mod:`servicekit.status`: the one table from those families to gRPC status, at the edge.
- :mod:`servicekit.observability`: structlog setup, request logs and Prometheus metrics.
- :mod:`servicekit.nats_connect`: a NATS connection with reconnects and a clean drain.
- :mod:`servicekit.interceptors`: the per-call scope mechanism the interceptors share.
"""
