#pragma once
// A read-only table of chips: id, name, peak bf16 FLOPs/s, HBM capacity and bandwidth.

#include "hardware/chip.h"

#include <QTableWidget>

#include <vector>

namespace meshplan::views {

class ChipTable : public QTableWidget
{
    Q_OBJECT

public:
    explicit ChipTable(QWidget *parent = nullptr);

    void setChips(const std::vector<model::Chip> &chips);
};

} // namespace meshplan::views
