"""The host facts a benchmark names its host by, from the probe's own record of the host."""

from hybridtune.probe.host_facts import CacheFacts, HostFacts, host_summary


def test_host_summary_names_the_cpu_its_cores_and_each_cache_level():
    facts = HostFacts(
        model_name="AMD EPYC 7B13", vendor="AuthenticAMD", cpu_family=25,
        flags=frozenset({"avx2", "hypervisor"}), sockets=1, cores_per_socket=2,
        threads_per_core=1, numa_domains=1, usable_cores=2, clock_hz=2.45e9,
        clock_source="test", caches=(CacheFacts(1, 32768, 64, 8, 64, 1, 2),
                                     CacheFacts(2, 524288, 1024, 8, 64, 1, 2),
                                     CacheFacts(3, 33554432, 32768, 16, 64, 2, 1)),
        available_memory_bytes=1 << 30, transparent_hugepage="madvise", topology_source="test")
    summary = host_summary(facts)
    assert summary["model"] == "AMD EPYC 7B13" and summary["vendor"] == "AuthenticAMD"
    assert summary["cores"] == 2 and summary["usable_cores"] == 2 and summary["hypervisor"]
    assert (summary["l1_bytes"], summary["l2_bytes"], summary["l3_bytes"]) == (
        32768, 524288, 33554432)
    assert summary["hostname"] and summary["kernel"]
