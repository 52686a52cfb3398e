"""The service platform both services stand on: gRPC server, auth, errors, logs, metrics, NATS.

- :mod:`poker.servicekit.server`: a grpc.aio server with health, reflection and a graceful stop.
- :mod:`poker.servicekit.tokens`: signed bearer tokens (JWTs), their keys and roles (no gRPC).
- :mod:`poker.servicekit.auth`: the caller's authentication and the current caller (the edge).
- :mod:`poker.servicekit.errors`: the application's error families (plain Python, no gRPC).
- :mod:`poker.servicekit.status`: the one table from those families to gRPC status, at the edge.
- :mod:`poker.servicekit.observability`: structlog setup, request logs and Prometheus metrics.
- :mod:`poker.servicekit.nats_connect`: a NATS connection with reconnects and a clean drain.
- :mod:`poker.servicekit.stack`: the one interceptor stack (observe, authenticate, map errors).
"""
