#include "palettes.h"

#include "base/units.h"
#include "cardlist.h"
#include "hardware/chipcatalog.h"
#include "hardware/namedclusters.h"
#include "hardware/topology.h"
#include "plan/plan.h"
#include "rolestyle.h"
#include "transformer/modelcatalog.h"

#include <QCoreApplication>

namespace meshplan::views {

namespace {

QString tr(const char *text)
{
    return QCoreApplication::translate("Palettes", text);
}

QString qs(const std::string &s)
{
    return QString::fromStdString(s);
}

QString paramsText(const model::ModelSpec &spec)
{
    const auto counts = model::countParams(spec);
    QString text = qs(model::formatNumber(static_cast<double>(counts.total) / 1e9)) + tr("B params");
    if (counts.active != counts.total)
        text += QStringLiteral(", ") + qs(model::formatNumber(static_cast<double>(counts.active) / 1e9))
                + tr("B active");
    return text;
}

QString modelToolTip(const model::ModelSpec &spec)
{
    QString tip = QStringLiteral("<b>%1</b><br>").arg(qs(spec.name).toHtmlEscaped());
    tip += tr("%1 layers, d_model %2, d_ff %3, %4 heads (%5 KV), vocab %6")
               .arg(spec.layers)
               .arg(spec.dModel)
               .arg(spec.dFf)
               .arg(spec.heads)
               .arg(spec.kvHeads)
               .arg(spec.vocab);
    if (spec.moe)
        tip += QStringLiteral("<br>") + tr("MoE: %1 experts, %2 per token").arg(spec.moe->experts).arg(spec.moe->expertsPerToken);
    if (spec.slidingWindow)
        tip += QStringLiteral("<br>") + tr("Sliding window: %1 tokens in %2 of %3 layers")
                                            .arg(spec.slidingWindow->window)
                                            .arg(spec.slidingWindow->localLayers)
                                            .arg(spec.layers);
    tip += QStringLiteral("<br><i>") + tr("Drag onto the mesh to plan it (or double-click).") + QStringLiteral("</i>");
    return tip;
}

QString chipNumbers(const model::Chip &chip)
{
    return qs(model::formatBytes(static_cast<double>(chip.hbmBytes), true)) + QStringLiteral(" HBM · ")
           + qs(model::formatFlopsPerSecond(chip.listedPeakFlops(model::DType::Bf16))) + QStringLiteral(" bf16");
}

/// "16x20x28 · 8960 chips" or "32 x 8 GPUs · 256 chips", then the chip's numbers on a line of
/// their own, so a narrow palette never breaks a figure from its unit.
QString hardwareSize(const nlohmann::json &hardware, const model::Chip &chip)
{
    const auto &topo = hardware.at("topology");
    QString size;
    std::int64_t chips = 0;
    if (chip.ici) {
        QStringList dims;
        std::vector<int> shape;
        for (const auto &d : topo) {
            dims << QString::number(d.get<int>());
            shape.push_back(d.get<int>());
        }
        const int slices = hardware.value("slices", 1);
        size = dims.join(QLatin1Char('x'));
        if (slices > 1)
            size += tr(" x %1 slices").arg(slices);
        if (auto t = model::Topology::tpuSlice(chip, shape, slices))
            chips = t->chipCount();
    } else {
        const int nodes = topo.at("nodes").get<int>();
        const int gpus = topo.at("gpus_per_node").get<int>();
        size = tr("%1 x %2 GPUs").arg(nodes).arg(gpus);
        if (auto t = model::Topology::gpuCluster(chip, nodes, gpus))
            chips = t->chipCount();
    }
    return size + (chips > 0 ? tr(" · %1 chips").arg(chips) : QString()) + QStringLiteral("\n");
}

} // namespace

void fillModelCards(CardList *list)
{
    const auto &catalog = model::ModelCatalog::builtin();
    list->setNumbersInline(true);
    for (const auto &spec : catalog.models())
        list->addCard(qs(spec.name), paramsText(spec), modelToolTip(spec), spec.id, QColor(0x6a, 0x5a, 0xcd));
}

QListWidgetItem *addImportedModelCard(CardList *list, const model::ModelSpec &spec, const nlohmann::json &modelRef,
                                      const QString &name)
{
    for (int row = 0; row < list->count(); ++row)
        if (CardList::payload(list->item(row)) == modelRef) {
            list->scrollToItem(list->item(row));
            return list->item(row);
        }
    auto *item = list->addCard(name + tr(" (imported)"), paramsText(spec), modelToolTip(spec), modelRef,
                               QColor(0x88, 0x88, 0x88));
    list->scrollToItem(item);
    return item;
}

void fillHardwareCards(CardList *list)
{
    const auto &chips = model::ChipCatalog::builtin();
    for (const auto &cluster : model::namedClusters()) {
        const model::Chip *chip = chips.find(cluster.hardware.at("chip").get<std::string>());
        if (!chip)
            continue;
        list->addCard(qs(cluster.name), hardwareSize(cluster.hardware, *chip) + chipNumbers(*chip),
                      QStringLiteral("<b>%1</b><br>%2<br><i>%3</i>")
                          .arg(qs(cluster.name).toHtmlEscaped(), qs(cluster.description).toHtmlEscaped(),
                               tr("Drag onto the mesh to use this cluster.")),
                      cluster.hardware, chip->ici ? QColor(0x42, 0x85, 0xf4) : QColor(0x76, 0xb9, 0x00));
    }
    for (const auto &chip : chips.chips()) {
        const auto hardware = model::defaultHardwareFor(chip);
        list->addCard(qs(chip.name), hardwareSize(hardware, chip) + chipNumbers(chip),
                      QStringLiteral("<b>%1</b><br>%2<br><i>%3</i>")
                          .arg(qs(chip.name).toHtmlEscaped(), chipNumbers(chip),
                               tr("Drag onto the mesh; resize it in the inspector.")),
                      hardware, chip.ici ? QColor(0x42, 0x85, 0xf4) : QColor(0x76, 0xb9, 0x00));
    }
}

void fillRoleCards(CardList *list)
{
    list->setCompact(true); // six short names: all of them in two or three rows
    for (model::Role role : model::kRoles)
        list->addCard(roleLabel(role), QString(),
                      roleDescription(role) + QStringLiteral("\n") + tr("Drop on an axis to place it there; drop on "
                                                                         "an axis's end to split the axis."),
                      std::string(model::roleName(role)), roleColor(role));
}

} // namespace meshplan::views
