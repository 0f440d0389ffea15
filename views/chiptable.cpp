#include "chiptable.h"

#include "base/units.h"

#include <QHeaderView>

namespace meshplan::views {

ChipTable::ChipTable(QWidget *parent)
    : QTableWidget(parent)
{
    setColumnCount(6);
    setHorizontalHeaderLabels({tr("Id"), tr("Chip"), tr("Peak bf16"), tr("HBM"), tr("HBM bandwidth"), tr("Links")});
    horizontalHeader()->setStretchLastSection(true);
    verticalHeader()->hide();
    setEditTriggers(QAbstractItemView::NoEditTriggers);
    setSelectionBehavior(QAbstractItemView::SelectRows);
    setAlternatingRowColors(true);
}

void ChipTable::setChips(const std::vector<model::Chip> &chips)
{
    setRowCount(static_cast<int>(chips.size()));
    int row = 0;
    for (const auto &chip : chips) {
        const auto text = [](const std::string &s) { return new QTableWidgetItem(QString::fromStdString(s)); };
        std::string links;
        if (chip.ici)
            links = "ICI " + model::formatBytesPerSecond(chip.ici->linkBandwidth) + "/link, "
                    + std::to_string(chip.ici->torusDims) + "D torus; DCN "
                    + model::formatBytesPerSecond(chip.dcnBandwidth);
        else if (chip.nvlink && chip.scaleOut)
            links = "NVLink " + model::formatBytesPerSecond(chip.nvlink->bandwidth) + " x"
                    + std::to_string(chip.nvlink->domainSize) + "; scale-out "
                    + model::formatBytesPerSecond(chip.scaleOut->nodeEgressBandwidth) + "/node";
        setItem(row, 0, text(chip.id));
        setItem(row, 1, text(chip.name));
        setItem(row, 2, text(model::formatFlopsPerSecond(chip.listedPeakFlops(model::DType::Bf16))));
        setItem(row, 3, text(model::formatBytes(static_cast<double>(chip.hbmBytes), true)));
        setItem(row, 4, text(model::formatBytesPerSecond(chip.hbmBandwidth)));
        setItem(row, 5, text(links));
        ++row;
    }
    resizeColumnsToContents();
}

} // namespace meshplan::views
