"""The pieces of ``make bench`` (``python -m benchmarks.bench``, which runs them in order), one
capability each: ``config`` (paths, settings, the services' environment), ``database`` (the
``bench`` database and its seed), ``services`` (gunicorn and the Celery workers), ``pgbench``
(M1's denominator), ``load`` (wrk, closed and open loop; single requests), ``cpu`` (CPU per
part of the stack), ``lists`` (the list requests and their SQL), ``measure`` (the measured runs
in order), ``pyspy`` (the create path's profile), ``gate`` (the drain and the pass/fail checks),
``metrics`` (the figures), ``pgbouncer`` (the service through PgBouncer beside direct
connections) and ``report`` (``results/latest.json`` and ``latest.md``)."""
