// SPDX-License-Identifier: BSD-3-Clause
// Runs a fuzz target over saved inputs without libFuzzer, so that every
// compiler builds it and `make test` replays the corpus (tests/fuzz/corpus/):
// each argument is a file or a directory of files.
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool read_file(const std::string &path, std::vector<uint8_t> *out)
{
    FILE *f = fopen(path.c_str(), "rb");
    if (!f)
        return false;
    uint8_t buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
        out->insert(out->end(), buf, buf + n);
    fclose(f);
    return true;
}

static int replay(const std::string &path)
{
    std::vector<uint8_t> data;
    if (!read_file(path, &data)) {
        fprintf(stderr, "replay: cannot read %s\n", path.c_str());
        return 1;
    }
    LLVMFuzzerTestOneInput(data.data(), data.size());
    return 0;
}

int main(int argc, char **argv)
{
    int inputs = 0, errors = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: no such file or directory: %s\n", argv[i]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            errors += replay(argv[i]);
            inputs++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        std::vector<std::string> names;
        while (struct dirent *e = d ? readdir(d) : nullptr)
            if (e->d_name[0] != '.')
                names.push_back(std::string(argv[i]) + "/" + e->d_name);
        if (d)
            closedir(d);
        for (const std::string &name : names) {
            errors += replay(name);
            inputs++;
        }
    }
    printf("replay: %d inputs, %d unreadable\n", inputs, errors);
    return errors == 0 && inputs > 0 ? 0 : 1;
}
