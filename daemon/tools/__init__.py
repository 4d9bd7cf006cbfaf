"""The tools around the daemon: evaluation, benchmarks, the fuzzer, the D-Bus test client, the service
installer and tsuzuri-lm. The daemon and the frontends never import them."""
