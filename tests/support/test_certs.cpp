// SPDX-License-Identifier: BSD-3-Clause
#include "test_certs.hpp"

#include <stdlib.h>

namespace
{
std::string g_dir;

void remove_certs()
{
    std::string rm = "rm -rf '" + g_dir + "'";
    if (system(rm.c_str()) != 0)
        return; // a temp dir left behind is no test failure
}
} // namespace

bool test_certs_make()
{
    if (!g_dir.empty())
        return true;
    char tmpl[] = "/tmp/edgelock-tls-XXXXXX";
    if (!mkdtemp(tmpl))
        return false;
    std::string here = __FILE__;
    std::string script = here.substr(0, here.rfind('/')) + "/../integration/tls/make_certs.sh";
    std::string cmd = "bash '" + script + "' '" + tmpl + "'";
    if (system(cmd.c_str()) != 0)
        return false;
    g_dir = tmpl;
    atexit(remove_certs);
    return true;
}

std::string test_cert(const char *name)
{
    return g_dir + "/" + name;
}
