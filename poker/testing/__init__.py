"""Test kit: in-process services, a real nats-server on loopback, service processes and test
certificates.

Used by the tests and the benchmarks; never by the services.
"""
