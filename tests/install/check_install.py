#!/usr/bin/env python3
"""tests/install/check_install.py: what a plugin author gets from `cmake --install`: the CLI, the
plugin headers, a CMake package (find_package(dlpack_validate) -> dlpack_validate::plugin_abi)
and a pkg-config file. Installs the build into a scratch prefix, builds the example plugin both
ways against it, and runs the installed validator on each."""
import argparse
import os
import shutil
import subprocess
import sys


def sh(cmd, **kw):
    print("$", " ".join(cmd), flush=True)
    return subprocess.run(cmd, check=True, **kw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--source", required=True, help="the repository")
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    prefix = os.path.join(a.work, "prefix")
    sh(["cmake", "--install", a.build, "--prefix", prefix], stdout=subprocess.DEVNULL)
    validator = os.path.join(prefix, "bin", "dlpack-validate")
    toy = os.path.join(a.source, "examples", "toy_plugin", "toy_plugin.c")
    run = [validator, "--filter", "producer.tensor.float32.*", "--filter", "consumer.roundtrip.*", "-q"]

    # CMake package
    proj = os.path.join(a.work, "cmake-build")
    sh(["cmake", "-S", os.path.join(a.source, "tests", "install", "consumer"), "-B", proj,
        f"-DCMAKE_PREFIX_PATH={prefix}", f"-DTOY_SOURCE={toy}"], stdout=subprocess.DEVNULL)
    sh(["cmake", "--build", proj], stdout=subprocess.DEVNULL)
    sh(run + [os.path.join(proj, "libtoy_dlpv.so")])

    # pkg-config
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(prefix, "lib", "pkgconfig"))
    cflags = subprocess.run(["pkg-config", "--cflags", "dlpack-validate"], env=env, check=True,
                            capture_output=True, text=True).stdout.split()
    so = os.path.join(a.work, "libtoy_pc.so")
    sh(["cc", "-shared", "-fPIC", *cflags, toy, "-o", so])
    sh(run + [so])
    print("ok: the installed package builds a plugin with find_package and with pkg-config, "
          "and the installed validator runs it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
