#include "harness/table.hpp"

#include <algorithm>

namespace tandem::harness {

Table::Table(std::vector<std::string> header) {
    m_rows.push_back(std::move(header));
}

void Table::add(std::vector<std::string> row) {
    m_rows.push_back(std::move(row));
}

void Table::print(std::FILE* out) const {
    std::vector<std::size_t> width;
    for (const auto& row : m_rows) {
        width.resize(std::max(width.size(), row.size()), 0);
        for (std::size_t i = 0; i < row.size(); ++i) {
            width[i] = std::max(width[i], row[i].size());
        }
    }
    for (std::size_t r = 0; r < m_rows.size(); ++r) {
        std::string line;
        for (std::size_t i = 0; i < m_rows[r].size(); ++i) {
            line += m_rows[r][i];
            if (i + 1 < m_rows[r].size()) {
                line += std::string(width[i] - m_rows[r][i].size() + 2, ' ');
            }
        }
        std::fprintf(out, "%s\n", line.c_str());
        if (r == 0) {
            std::size_t total = 0;
            for (std::size_t w : width) {
                total += w + 2;
            }
            std::fprintf(out, "%s\n", std::string(total > 2 ? total - 2 : 0, '-').c_str());
        }
    }
}

} // namespace tandem::harness
