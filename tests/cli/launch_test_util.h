#pragma once
// Shared by launch_test.cc (the plan) and launch_cli_test.cc (the built binary).
#include <string>

namespace partita::cli {

// What launch adds across hosts so that mpirun notices a host it lost (docs/launch.md).
const std::string kKeepalive =
    "--mca oob_tcp_keepalive_time 10 --mca oob_tcp_keepalive_intvl 10 --mca "
    "oob_tcp_keepalive_probes 3 ";

}  // namespace partita::cli
