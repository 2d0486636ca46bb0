// Table: a plain-text table for terminal output, columns sized to their widest cell, the header
// underlined: what every tool prints its results as. Plain value; one thread at a time.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace tandem::harness {

class Table {
public:
    explicit Table(std::vector<std::string> header);
    void add(std::vector<std::string> row);
    void print(std::FILE* out = stdout) const;

private:
    std::vector<std::vector<std::string>> m_rows;
};

} // namespace tandem::harness
