"""Run a tournament on SLURM or PBS: workers as batch jobs (dask-jobqueue).

    pip install 'arena[dask]' dask-jobqueue
    python deploy/jobqueue.py slurm --jobs 4 --cores 16 --memory 32GB \
        --queue normal --walltime 04:00:00 -- bots/* --games 100 --seed 1 --out results/cup

Starts a Dask scheduler here (on the login node, or wherever this runs: the
compute nodes must reach it), submits ``--jobs`` batch jobs that each start
one ``dask worker`` with ``--cores`` threads (one game at a time each), waits
for the first worker, runs ``arena run ... --cluster <scheduler>`` with the
arguments after ``--``, and cancels the jobs when it ends.  Every compute
node needs what README.md ("More than one machine") lists.  Run it again with
the same arguments to go on after an interruption.
"""

from __future__ import annotations

import argparse
import subprocess
import sys


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("system", choices=("slurm", "pbs"))
    parser.add_argument("--jobs", type=int, default=2, help="batch jobs (worker hosts)")
    parser.add_argument("--cores", type=int, default=8, help="CPUs per job = games at once")
    parser.add_argument("--memory", default="16GB", help="memory per job")
    parser.add_argument("--queue", help="partition (SLURM) or queue (PBS)")
    parser.add_argument("--account", help="account to charge")
    parser.add_argument("--walltime", default="04:00:00")
    parser.add_argument("arena_args", nargs=argparse.REMAINDER,
                        help="-- then the arguments of arena run")
    args = parser.parse_args()
    arena_args = args.arena_args[1:] if args.arena_args[:1] == ["--"] else args.arena_args

    from dask_jobqueue import PBSCluster, SLURMCluster

    kind = SLURMCluster if args.system == "slurm" else PBSCluster
    # One worker process per job, one thread per core: each thread plays one game
    # at a time, and the bots' processes of a thread are kept from unit to unit.
    with kind(cores=args.cores, processes=1, memory=args.memory, queue=args.queue,
              account=args.account, walltime=args.walltime) as cluster:
        cluster.scale(jobs=args.jobs)
        from distributed import Client

        with Client(cluster) as client:
            client.wait_for_workers(1, timeout=3600)
        command = [sys.executable, "-m", "arena", "run", *arena_args,
                   "--cluster", cluster.scheduler_address]
        print(" ".join(command), file=sys.stderr)
        return subprocess.call(command)


if __name__ == "__main__":
    sys.exit(main())
