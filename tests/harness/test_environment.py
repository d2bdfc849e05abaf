"""Environment readers against the fake /proc and /sys trees in fixtures/."""

import gzip
import shutil


def test_old_smp_box_topology_from_sysfs(sb, oldbox):
    topo = sb.read_topology(oldbox)
    # cpu8 is offline (no topology directory) and must not count.
    assert topo == {"cpus": 8, "sockets": 2, "cores_per_socket": 2, "threads_per_core": 2}


def test_topology_falls_back_to_cpuinfo(sb, modernvm):
    topo = sb.read_topology(modernvm)
    assert topo == {"cpus": 4, "sockets": 1, "cores_per_socket": 4, "threads_per_core": 1}


def test_topology_unknown_on_empty_tree(sb, tmp_path):
    assert sb.read_topology(str(tmp_path))["sockets"] is None


def test_cpu_model_caches_memory(sb, oldbox):
    cpuinfo = sb.read_cpuinfo(oldbox)
    assert len(cpuinfo) == 8
    assert sb.cpu_model(cpuinfo) == "Intel(R) Xeon(TM) CPU 3.20GHz"
    assert sb.read_caches(oldbox) == {"L1d": "16K", "L1i": "12K", "L2": "2048K"}
    assert sb.read_memory_mb(oldbox) == 3950


def test_cpu_model_arm64_ids(sb):
    cpuinfo = [{"processor": "0", "cpu implementer": "0x41", "cpu part": "0xd0c"}]
    assert sb.cpu_model(cpuinfo) == "ARM implementer 0x41 part 0xd0c"


def test_old_kernel_tunables_keep_full_names(sb, oldbox):
    kconfig = sb.read_kernel_config(oldbox, "2.6.24.1-smp")
    tunables = sb.read_tunables(oldbox, kconfig)
    assert tunables["sched_child_runs_first"] == 1
    assert tunables["sched_compat_yield"] == 0
    assert tunables["sched_latency_ns"] == 20000000
    assert tunables["HZ"] == 1000
    assert "sched_domain" not in tunables  # a directory, reported under sched_domains
    assert kconfig == {"CONFIG_PREEMPT_VOLUNTARY": "y", "CONFIG_HZ_1000": "y",
                       "CONFIG_HZ": "1000", "CONFIG_FAIR_GROUP_SCHED": "y",
                       "CONFIG_SCHED_SMT": "y"}


def test_debugfs_knobs_get_their_old_proc_names(sb, modernvm):
    tunables = sb.read_tunables(modernvm)
    assert tunables["sched_base_slice_ns"] == 3000000
    assert tunables["sched_migration_cost_ns"] == 500000
    assert tunables["sched_preempt"] == "none voluntary (full)"
    assert tunables["numa_balancing_scan_delay_ms"] == 1000
    assert tunables["sched_rr_timeslice_ms"] == 100
    for dump in ("sched_features", "sched_debug", "sched_verbose"):
        assert dump not in tunables


def test_sched_features_old_and_new_locations(sb, oldbox, modernvm):
    assert sb.read_sched_features(oldbox).startswith("NEW_FAIR_SLEEPERS")
    assert sb.read_sched_features(modernvm).startswith("PLACE_LAG")


def test_sched_domains(sb, oldbox, modernvm):
    old = sb.read_sched_domains(oldbox)
    assert old["domain0"] == {"flags": 687, "imbalance_pct": 110, "name": "SIBLING"}
    assert old["domain1"]["name"] == "MC"
    new = sb.read_sched_domains(modernvm)
    assert new["domain0"]["flags"].startswith("SD_BALANCE_NEWIDLE")


def test_governor_cmdline_uname(sb, oldbox):
    assert sb.read_governor(oldbox) == "ondemand,performance"
    assert sb.read_cpufreq_driver(oldbox) == "acpi-cpufreq"
    assert sb.read_value(oldbox, "/proc/cmdline") == "ro root=/dev/sda1 nohz=off"
    uname = sb.read_uname(oldbox)
    assert uname["release"] == "2.6.24.1-smp"
    assert uname["nodename"] == "oldbox"


def test_virtualization(sb, oldbox, modernvm, tmp_path):
    assert sb.detect_virtualization(oldbox) == "none"
    assert sb.detect_virtualization(modernvm) == "qemu"
    # Only the CPU flag left: a VM, but not which one.
    tree = tmp_path / "vm"
    shutil.copytree(modernvm, str(tree))
    shutil.rmtree(str(tree / "sys" / "class"))
    assert sb.detect_virtualization(str(tree)) == "unknown-vm"
    assert sb.detect_virtualization(str(tmp_path / "nothing")) is None


def test_kernel_config_from_proc_config_gz(sb, tmp_path):
    (tmp_path / "proc").mkdir()
    with gzip.open(str(tmp_path / "proc" / "config.gz"), "wt") as f:
        f.write("CONFIG_HZ=300\nCONFIG_PREEMPT_DYNAMIC=y\nCONFIG_DEBUG_INFO=y\n")
    assert sb.read_kernel_config(str(tmp_path), "6.6.0") == {
        "CONFIG_HZ": "300", "CONFIG_PREEMPT_DYNAMIC": "y"}


def test_collect_environment_shape(sb, oldbox):
    env = sb.collect_environment(oldbox)
    assert env["kernel"] == "2.6.24.1-smp"
    machine = env["machine"]
    assert set(machine) == {"name", "cpu_model", "arch", "sockets", "cores_per_socket",
                            "threads_per_core", "caches", "memory_mb", "virtualization"}
    assert machine["name"] == "oldbox"
    assert (machine["sockets"], machine["cores_per_socket"], machine["threads_per_core"]) == (
        2, 2, 2)
    environment = env["environment"]
    assert environment["cmdline"] == "ro root=/dev/sda1 nohz=off"
    assert environment["online_cpus"] == 8
    assert environment["uname"]["release"] == "2.6.24.1-smp"


def test_live_system_does_not_crash(sb):
    env = sb.collect_environment("/")
    assert env["kernel"]
    assert env["machine"]["arch"]


def test_to_number(sb):
    assert sb.to_number("42\n") == 42
    assert sb.to_number("-3") == -3
    assert sb.to_number("0.5") == 0.5
    for text in ("nan", "inf", "0x10", "1M", "", "N"):
        assert sb.to_number(text) == text
