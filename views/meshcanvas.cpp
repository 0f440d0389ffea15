#include "meshcanvas.h"

#include "base/units.h"
#include "dragmime.h"
#include "rolestyle.h"

#include <QDragEnterEvent>
#include <QFontMetricsF>
#include <QGraphicsItem>
#include <QGraphicsPathItem>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QMimeData>
#include <QPainter>
#include <QStyleOptionGraphicsItem>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace meshplan::views {

using model::Role;

namespace {

constexpr double kUnitPitch = 14; // chip cell plus gap at scale 1, scene units
constexpr double kUnitCell = 12;
constexpr double kBlockGap = 12;
constexpr int kMaxItems = 2048; // drawn blocks; more nodes or layers are aggregated
// The header is laid out in viewport pixels, so it reads the same at any zoom.
constexpr int kMargin = 8;
constexpr int kBarMinWidth = 150;
constexpr int kBarMaxWidth = 260;
constexpr int kBarHeight = 42;
constexpr int kTitlePx = 15;
constexpr int kCaptionPx = 11;
constexpr int kSlicePx = 15;
constexpr double kMinCaptionPx = 8; // a caption with less room than this is hidden, not shrunk
constexpr double kMaxPitchPx = 72;  // a fitted small mesh grows to fill the view up to this chip pitch
constexpr double kSplitZone = 0.2; // fraction of an axis bar at each end that splits the axis
// GPU clusters past this many chips are drawn as boxes of nodes (a pipeline stage, a data group):
// 2,048 nodes of 8 read as thin stripes. Nodes inside a box are drawn once they are this wide.
constexpr std::int64_t kBoxChips = 512;
constexpr double kNodePitchPx = 7;
// Item data keys: a caption shown only from (or below) this chip pitch in pixels.
constexpr int kMinPitchKey = 1;
constexpr int kMaxPitchKey = 2; // chip pitch on screen from which a box shows its nodes' chips

QString qs(const std::string &s)
{
    return QString::fromStdString(s);
}

/// How many of `count` blocks to put in a row, near `ideal`: a divisor of `count` within a
/// factor 1.6 of it when there is one, so no block is left alone in a last row.
std::int64_t rowLength(std::int64_t count, double ideal)
{
    auto best = std::clamp<std::int64_t>(static_cast<std::int64_t>(std::ceil(ideal)), 1, std::max<std::int64_t>(1, count));
    double bestOff = 1.6;
    for (std::int64_t d = 1; d <= count && d <= 4 * best; ++d) {
        const double off = std::max(static_cast<double>(d) / ideal, ideal / static_cast<double>(d));
        if (count % d == 0 && off < bestOff) {
            bestOff = off;
            best = d;
        }
    }
    return best;
}

std::size_t ri(Role role)
{
    return static_cast<std::size_t>(role);
}

} // namespace

struct MeshCanvas::Paint {
    QColor background, base, baseAlt, text, mid, outline;
    model::Plan plan;
    std::optional<model::MeshGroups> groups;
    std::vector<model::ChipKind> kinds;
    bool training = true;
    std::int64_t hovered = -1;
    std::array<std::int64_t, 6> hoveredGroup{};
    std::int64_t hoveredStage = 0;
    int cols = 1;
    int rows = 1;
    double pitch = kUnitPitch; // chips of small meshes are drawn larger
    double cell = kUnitCell;
    std::int64_t chipsPerBlock = 1;
    bool boxed = false; ///< nodes are grouped in boxes, which stand in for them when small
    double textScale = 1.0; ///< header and caption text grow with it (a projector)
    MeshCanvas::DropTarget dropHover;
};

// A box of nodes of a large GPU cluster (a pipeline stage, a data group, a run of nodes): one
// solid tile while its nodes are too small to tell apart, a frame around them once they show.
class GroupBoxItem : public QGraphicsItem
{
public:
    GroupBoxItem(const MeshCanvas *canvas, QRectF rect, std::int64_t firstChip, std::int64_t chips, bool odd)
        : m_canvas(canvas), m_rect(rect), m_first(firstChip), m_chips(chips), m_odd(odd)
    {
        setZValue(-1);
    }

    QRectF boundingRect() const override { return m_rect.adjusted(-2, -2, 2, 2); }
    QRectF rect() const { return m_rect; }
    std::int64_t firstChip() const { return m_first; }

    void paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *) override
    {
        const auto &p = m_canvas->paintState();
        const double lod = option->levelOfDetailFromTransform(painter->worldTransform());
        const bool hovered = p.hovered >= m_first && p.hovered < m_first + m_chips;
        QPen frame(hovered ? p.text : p.outline, hovered ? 2.5 : 1);
        frame.setCosmetic(true);
        painter->setPen(frame);
        if (lod * p.pitch < kNodePitchPx)
            painter->setBrush(m_odd ? p.baseAlt : p.base);
        else
            painter->setBrush(Qt::NoBrush);
        painter->drawRect(m_rect);
    }

private:
    const MeshCanvas *m_canvas;
    QRectF m_rect;
    std::int64_t m_first;
    std::int64_t m_chips;
    bool m_odd;
};

// One layer of a torus slice or one NVLink domain, or (aggregated) a run of them.
class ChipBlockItem : public QGraphicsItem
{
public:
    ChipBlockItem(const MeshCanvas *canvas, std::int64_t firstBlock, std::int64_t blocks, QRectF rect)
        : m_canvas(canvas), m_first(firstBlock), m_blocks(blocks), m_rect(rect)
    {
        setAcceptHoverEvents(false);
    }

    QRectF boundingRect() const override { return m_rect.adjusted(-2, -2, 2, 2); }
    std::int64_t firstBlock() const { return m_first; }
    std::int64_t blocks() const { return m_blocks; }
    QRectF rect() const { return m_rect; }

    /// The chip whose cell contains `scenePos`, or -1.
    std::int64_t chipAt(QPointF scenePos) const
    {
        const auto &p = m_canvas->paintState();
        if (m_blocks != 1 || !m_rect.contains(scenePos))
            return -1;
        const QPointF local = scenePos - m_rect.topLeft();
        const int col = static_cast<int>(local.x() / p.pitch);
        const int row = static_cast<int>(local.y() / p.pitch);
        if (col >= p.cols || row >= p.rows || local.x() - col * p.pitch > p.cell || local.y() - row * p.pitch > p.cell)
            return -1;
        const std::int64_t index = static_cast<std::int64_t>(row) * p.cols + col;
        if (index >= p.chipsPerBlock)
            return -1;
        return m_first * p.chipsPerBlock + index;
    }

    QRectF cellRect(std::int64_t localIndex) const
    {
        const auto &p = m_canvas->paintState();
        const auto col = static_cast<double>(localIndex % p.cols);
        const auto row = static_cast<double>(localIndex / p.cols);
        return {m_rect.x() + col * p.pitch, m_rect.y() + row * p.pitch, p.cell, p.cell};
    }

    void paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *) override
    {
        const auto &p = m_canvas->paintState();
        const double lod = option->levelOfDetailFromTransform(painter->worldTransform());
        const std::int64_t first = m_first * p.chipsPerBlock;
        const std::int64_t last = (m_first + m_blocks) * p.chipsPerBlock;
        if (p.boxed && lod * p.pitch < kNodePitchPx)
            return; // its box is drawn as one tile instead
        if (m_blocks > 1 || lod * p.pitch < 3) {
            // Too small to draw chip by chip: one tile, marked when it holds the hovered chip.
            painter->setPen(Qt::NoPen);
            QColor fill = p.base;
            if (p.groups && p.plan.parallelism.degree(Role::Pipeline) > 1) {
                // Stages stay visible at any zoom: tiles take the tint of their first chip's stage.
                const auto stage = p.groups->rankIn(first, Role::Pipeline);
                fill = stage % 2 == 1 ? p.baseAlt : p.base;
                if (p.hovered >= 0 && stage == p.hoveredStage) {
                    fill = roleColor(Role::Pipeline);
                    fill.setAlpha(110);
                }
            }
            if (p.hovered >= first && p.hovered < last)
                fill = p.text;
            painter->setBrush(fill);
            painter->drawRect(m_rect);
            return;
        }
        painter->setRenderHint(QPainter::Antialiasing, false);
        const bool pipelined = p.plan.parallelism.degree(Role::Pipeline) > 1;
        for (std::int64_t chip = first; chip < last; ++chip) {
            const QRectF r = cellRect(chip - first);
            QColor fill = p.base;
            if (p.groups && pipelined && p.groups->rankIn(chip, Role::Pipeline) % 2 == 1)
                fill = p.baseAlt;
            // Outlines only where a chip is big enough on screen for them to read as outlines.
            QPen pen = lod * p.pitch >= 6 ? QPen(p.outline, 0) : QPen(Qt::NoPen);
            bool dot = false;
            bool bar = false;
            if (p.groups && p.hovered >= 0) {
                const auto &g = *p.groups;
                const auto same = [&](Role role) {
                    return p.plan.parallelism.degree(role) > 1 && g.groupOf(chip, role) == p.hoveredGroup[ri(role)];
                };
                if (pipelined && g.rankIn(chip, Role::Pipeline) == p.hoveredStage) {
                    QColor tint = roleColor(Role::Pipeline);
                    tint.setAlpha(90);
                    fill = tint;
                }
                if (same(Role::Expert))
                    fill = roleColor(Role::Expert);
                if (same(Role::Tensor))
                    fill = roleColor(Role::Tensor);
                if (same(Role::Fsdp))
                    pen = QPen(roleColor(Role::Fsdp), 2);
                dot = same(Role::Context);
                bar = same(Role::Data);
            }
            painter->setPen(pen);
            painter->setBrush(fill);
            painter->drawRect(r);
            if (dot) {
                painter->setPen(Qt::NoPen);
                painter->setBrush(roleColor(Role::Context));
                painter->drawEllipse(r.center(), 2.5, 2.5);
            }
            if (bar) {
                painter->setPen(Qt::NoPen);
                painter->setBrush(roleColor(Role::Data));
                painter->drawRect(QRectF(r.left() + 1, r.bottom() - 3, r.width() - 2, 2.5));
            }
            if (chip == p.hovered) {
                painter->setPen(QPen(p.text, 2.5));
                painter->setBrush(Qt::NoBrush);
                painter->drawRect(r.adjusted(-1, -1, 1, 1));
            }
        }
    }

private:
    const MeshCanvas *m_canvas;
    std::int64_t m_first;
    std::int64_t m_blocks;
    QRectF m_rect;
};

// One mesh axis: its name, size and link, and the roles holding it as coloured segments.
class AxisBarItem : public QGraphicsItem
{
public:
    AxisBarItem(const MeshCanvas *canvas, int axis) : m_canvas(canvas), m_axis(axis)
    {
        // Drawn in viewport pixels: the canvas places it at the top of the view after every zoom.
        setFlag(ItemIgnoresTransformations);
    }

    QRectF boundingRect() const override { return m_rect.adjusted(-2, -2, 2, 2); }
    /// Where the bar sits in the viewport, in pixels.
    QRect viewRect() const { return m_view; }
    void setViewRect(const QRect &r)
    {
        if (r.size() != m_view.size()) {
            prepareGeometryChange();
            m_rect = QRectF(QPointF(0, 0), QSizeF(r.size()));
        }
        m_view = r;
    }
    int axis() const { return m_axis; }
    QString label() const { return m_label; }

    void setContent(QString title, std::vector<model::MeshGroups::AxisShare> shares, int size)
    {
        m_title = std::move(title);
        m_shares = std::move(shares);
        m_size = size;
        QStringList parts;
        for (const auto &s : m_shares)
            parts << roleLabel(s.role).toLower() + QLatin1Char(' ') + QString::number(s.size);
        m_label = m_title + QStringLiteral(": ") + (parts.isEmpty() ? QStringLiteral("unused") : parts.join(QStringLiteral(" · ")));
        update();
    }

    void paint(QPainter *painter, const QStyleOptionGraphicsItem *, QWidget *) override
    {
        const auto &p = m_canvas->paintState();
        painter->setRenderHint(QPainter::Antialiasing);
        const bool target = p.dropHover.axis == m_axis;
        QColor frame = target ? p.text : p.mid;
        painter->setPen(QPen(frame, target ? 2 : 1));
        painter->setBrush(p.background.lighter(target ? 115 : 104));
        painter->drawRoundedRect(m_rect, 5, 5);
        if (target) {
            // Show which drop this would be: the whole axis or a split at its end.
            QColor zone = p.text;
            zone.setAlpha(40);
            painter->setPen(Qt::NoPen);
            painter->setBrush(zone);
            const double w = m_rect.width() * kSplitZone;
            if (p.dropHover.split) {
                painter->drawRect(QRectF(m_rect.left(), m_rect.top(), w, m_rect.height()));
                painter->drawRect(QRectF(m_rect.right() - w, m_rect.top(), w, m_rect.height()));
            } else {
                painter->drawRect(m_rect.adjusted(w, 0, -w, 0));
            }
        }
        painter->setPen(p.text);
        QFont font = painter->font();
        font.setPixelSize(static_cast<int>(std::lround(12 * p.textScale)));
        font.setBold(true);
        painter->setFont(font);
        const QRectF titleRect = m_rect.adjusted(7, 2, -7, -m_rect.height() / 2);
        painter->drawText(titleRect, Qt::AlignLeft | Qt::AlignVCenter,
                          QFontMetricsF(font).elidedText(m_title, Qt::ElideRight, titleRect.width()));

        // Segments: each role's share on a log scale, the unassigned rest grey.
        const QRectF strip = m_rect.adjusted(7, m_rect.height() / 2 + 1, -7, -4);
        font.setBold(false);
        font.setPixelSize(static_cast<int>(std::lround(kCaptionPx * p.textScale)));
        painter->setFont(font);
        const QFontMetricsF fm(font);
        // Widths on a log scale, but each wide enough for its label where the bar allows (a
        // 2-way role next to a 16-way one got a sliver: "data 2" read "ata 2"); labels that
        // still do not fit are elided, the full text is in the tooltip.
        struct Segment {
            QString text;
            QColor fill, ink;
            double width;
        };
        std::vector<Segment> segs;
        const double total = std::log2(std::max(2, m_size));
        int used = 1;
        for (const auto &s : m_shares) {
            segs.push_back({roleLabel(s.role).toLower() + QLatin1Char(' ') + QString::number(s.size), roleColor(s.role),
                            Qt::white, std::log2(std::max(2, s.size)) / total});
            used *= s.size;
        }
        if (used < m_size)
            segs.push_back({QString::number(m_size / used), p.mid, p.background,
                            std::log2(static_cast<double>(m_size) / used) / total});
        double sum = 0;
        for (auto &seg : segs) {
            const double need = std::min(fm.horizontalAdvance(seg.text) + 8, strip.width() / static_cast<double>(segs.size()));
            seg.width = std::max(seg.width * strip.width(), need);
            sum += seg.width;
        }
        double x = strip.left();
        for (const auto &seg : segs) {
            const double w = seg.width * strip.width() / std::max(sum, strip.width());
            const QRectF r(x, strip.top(), &seg == &segs.back() ? strip.right() - x : w, strip.height());
            painter->setPen(Qt::NoPen);
            painter->setBrush(seg.fill);
            painter->drawRect(r.adjusted(0.5, 0, -0.5, 0));
            painter->setPen(seg.ink);
            painter->drawText(r, Qt::AlignCenter, fm.elidedText(seg.text, Qt::ElideRight, r.width() - 2));
            x += w;
        }
    }

private:
    const MeshCanvas *m_canvas;
    int m_axis;
    QRectF m_rect;
    QRect m_view;
    QString m_title;
    QString m_label;
    std::vector<model::MeshGroups::AxisShare> m_shares;
    int m_size = 1;
};

MeshCanvas::MeshCanvas(QWidget *parent)
    : QGraphicsView(parent)
    , m_paint(std::make_unique<Paint>())
{
    setScene(new QGraphicsScene(this));
    setAcceptDrops(true);
    setMouseTracking(true);
    setRenderHint(QPainter::Antialiasing, false);
    setDragMode(QGraphicsView::ScrollHandDrag);
    setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
    setViewportUpdateMode(QGraphicsView::BoundingRectViewportUpdate);
    // The mesh sits right below the header; spare height goes below it.
    setAlignment(Qt::AlignHCenter | Qt::AlignTop);
    setToolTip(tr("Drop a model or a cluster here; drop a role on an axis bar (its ends split the axis).\n"
                  "Wheel zooms, drag pans, hover a chip to see its groups."));
    changeEvent(nullptr);
}

MeshCanvas::~MeshCanvas() = default;

void MeshCanvas::changeEvent(QEvent *event)
{
    if (event)
        QGraphicsView::changeEvent(event);
    if (event && event->type() != QEvent::PaletteChange)
        return;
    // Colours follow the application palette (light or dark).
    const QPalette pal = palette();
    auto &p = *m_paint;
    p.background = pal.color(QPalette::Base);
    p.text = pal.color(QPalette::Text);
    p.mid = pal.color(QPalette::Mid);
    const bool dark = p.background.lightness() < p.text.lightness();
    p.base = dark ? QColor(0x4a, 0x55, 0x66) : QColor(0xd6, 0xdd, 0xe8);
    // Odd pipeline stages: the base mixed with the pipeline colour, so stages read as bands.
    const QColor stage = roleColor(Role::Pipeline);
    const auto mix = [](int a, int b) { return (2 * a + b) / 3; };
    p.baseAlt = QColor(mix(p.base.red(), stage.red()), mix(p.base.green(), stage.green()), mix(p.base.blue(), stage.blue()));
    // Chip outlines: the chip fill moved a third of the way to the text colour. QPalette::Mid
    // is nearly the dark chip fill in dark palettes, so outlines vanished there.
    const auto toward = [](int a, int b) { return (2 * a + b) / 3; };
    p.outline = QColor(toward(p.base.red(), p.text.red()), toward(p.base.green(), p.text.green()),
                       toward(p.base.blue(), p.text.blue()));
    setBackgroundBrush(p.background);
    // Labels and frames take their colours when the scene is built, so a theme change rebuilds it.
    if (event && !m_meshKey.empty()) {
        rebuildScene();
        updateAxisBars();
    }
    if (scene())
        scene()->update();
}

void MeshCanvas::setTitle(const QString &title)
{
    if (title == m_titleText)
        return;
    m_titleText = title;
    if (!m_title)
        return; // the next rebuild shows it
    m_title->setToolTip(m_titleText);
    layoutHeader();
}

void MeshCanvas::setPlan(const model::Plan &plan, const model::Evaluation *evaluation)
{
    auto &p = *m_paint;
    p.plan = plan;
    p.training = plan.kind == model::WorkloadKind::Training;
    p.kinds = evaluation ? evaluation->perChip : std::vector<model::ChipKind>{};
    auto placement = model::placeRoles(plan.topology, plan.parallelism.degrees, plan.parallelism.placement);
    if (placement)
        p.groups.emplace(plan.topology, *placement);
    else
        p.groups.reset();

    std::string key = plan.topology.chip().id;
    for (const auto &axis : plan.topology.axes())
        key += "/" + axis.name + std::to_string(axis.size);
    // A large GPU cluster's boxes follow the roles on its node axis (rebuildScene): another
    // split of that axis (pipeline 16 to 1) needs them drawn again, not only recoloured.
    const int nodeAxis = plan.topology.axisIndex("node");
    if (!plan.topology.chip().isTpu() && nodeAxis >= 0 && p.groups)
        for (const auto &share : p.groups->sharesOf(nodeAxis))
            key += "|" + std::string(model::roleName(share.role)) + std::to_string(share.size) + ":"
                   + std::to_string(share.stride);
    if (key != m_meshKey) {
        m_meshKey = key;
        m_hovered = -1;
        rebuildScene();
    }
    setHoveredChip(m_hovered < plan.topology.chipCount() ? m_hovered : -1);
    updateAxisBars();
    scene()->update();
}

void MeshCanvas::rebuildScene()
{
    auto &p = *m_paint;
    QGraphicsScene *s = scene();
    s->clear();
    m_headerBack = nullptr;
    m_title = nullptr;
    m_legend = nullptr;
    m_blocks.clear();
    m_boxes.clear();
    m_axisBars.clear();
    m_captions.clear();
    m_legendLines.clear();
    m_boxNames.clear();

    const model::Topology &topo = p.plan.topology;
    const auto &axes = topo.axes();
    const auto size = [&](const char *name) {
        const int i = topo.axisIndex(name);
        return i < 0 ? 1 : axes[static_cast<std::size_t>(i)].size;
    };
    const bool tpu = topo.chip().isTpu();
    std::int64_t blocks = 0;
    std::int64_t blocksPerGroup = 0;
    if (tpu) {
        p.cols = size("x");
        p.rows = size("y");
        blocksPerGroup = size("z");
        blocks = blocksPerGroup * size("slice");
    } else {
        const int gpus = size("gpu");
        p.cols = gpus <= 16 ? gpus : static_cast<int>(std::ceil(std::sqrt(2.0 * gpus)));
        p.rows = (gpus + p.cols - 1) / p.cols;
        blocks = size("node");
        blocksPerGroup = blocks;
    }
    p.chipsPerBlock = topo.chipCount() / std::max<std::int64_t>(1, blocks);
    m_aggregate = std::max<std::int64_t>(1, (blocks + kMaxItems - 1) / kMaxItems);
    // A large GPU cluster is drawn as boxes of nodes, cut where the roles on the node axis
    // change (every pipeline stage, or each stage's data groups), laid out like TPU slices.
    const int nodeAxis = topo.axisIndex("node");
    const std::vector<model::MeshGroups::AxisShare> nodeShares =
        !tpu && nodeAxis >= 0 && p.groups ? p.groups->sharesOf(nodeAxis) : std::vector<model::MeshGroups::AxisShare>{};
    QString boxWhat; // what a box stands for, in the legend
    p.boxed = !tpu && m_aggregate == 1 && topo.chipCount() > kBoxChips && blocks >= 16;
    if (p.boxed) {
        // Box sizes the roles give (products of the inner shares), the one nearest 16 boxes (so
        // each keeps room for its name at 1024x700); without one in range, runs of a power of
        // two nodes.
        std::int64_t best = 0;
        std::int64_t inner = 1;
        for (const auto &share : nodeShares) {
            inner *= share.size;
            const std::int64_t boxes = blocks / inner;
            if (blocks % inner == 0 && boxes >= 4 && boxes <= 64
                && (best == 0 || std::abs(std::log2(static_cast<double>(boxes) / 16))
                                     < std::abs(std::log2(static_cast<double>(blocks / best) / 16))))
                best = inner;
        }
        if (best == 0) {
            best = 1;
            while (blocks % (2 * best) == 0 && blocks / (2 * best) >= 16)
                best *= 2;
        }
        blocksPerGroup = best;
        p.boxed = blocks / blocksPerGroup > 1;
        QStringList outer;
        for (const auto &share : nodeShares)
            if (share.stride >= blocksPerGroup)
                outer << (share.role == Role::Pipeline ? tr("pipeline stage") : roleLabel(share.role).toLower() + tr(" group"));
        boxWhat = outer.isEmpty() ? tr("a run of nodes") : tr("one %1").arg(outer.join(tr(" × ")));
    }

    // Scene units only set proportions: the mesh is fitted to the view, the header is in pixels.
    p.pitch = kUnitPitch;
    p.cell = kUnitCell;
    const double blockW = p.cols * p.pitch - (p.pitch - p.cell);
    const double blockH = p.rows * p.pitch - (p.pitch - p.cell);
    // TPU layers are set apart by a gap that grows with the layer (a chip's width between
    // 16x16 layers would read as one block) and carry a "z=k" row above them.
    const double gap = tpu ? std::max(1.5 * p.pitch, 0.12 * std::max(blockW, blockH)) : kBlockGap;
    // GPU node names get a row that grows with the domain (an NVL72 rack is 6 chips tall), so
    // they keep readable room above the dashed frame.
    const double labelH = tpu ? std::max(1.2 * p.pitch, 0.18 * blockH) : std::max(1.4 * p.pitch, 0.25 * blockH);
    const std::int64_t items = (blocksPerGroup + m_aggregate - 1) / m_aggregate;
    const std::int64_t groups = blocks / std::max<std::int64_t>(1, blocksPerGroup);
    const double cellW = blockW + gap;
    const double cellH = blockH + gap + labelH;
    // Each group (a slice, or all nodes) is a grid of blocks; the groups form a grid too, both
    // chosen so the whole mesh comes out about 16:10. A row length that divides the blocks
    // evenly is preferred when one is near, so no layer is left alone in a last row.
    const std::int64_t perRow = rowLength(items, std::sqrt(1.6 * static_cast<double>(items) * cellH / cellW));
    const std::int64_t rowsUsed = (items + perRow - 1) / perRow;
    const double groupW = static_cast<double>(perRow) * cellW + 3 * gap;
    const double groupH = static_cast<double>(rowsUsed) * cellH + 4 * gap;
    const std::int64_t groupsPerRow =
        rowLength(groups, std::sqrt(1.6 * static_cast<double>(groups) * groupH / groupW));
    // Caption rows (direction marks, slice names, the fabric band) take a share of the mesh's
    // width, so they keep room for text when a large mesh is fitted to the view.
    const double meshWidth = static_cast<double>(groupsPerRow) * groupW;
    const double capH = std::max(1.6 * p.pitch, meshWidth / 45);

    // The header: title and one bar per axis, placed in pixels by layoutHeader().
    m_headerBack = s->addRect(QRectF(), QPen(Qt::NoPen), p.background);
    m_headerBack->setFlag(QGraphicsItem::ItemIgnoresTransformations);
    m_headerBack->setZValue(10);
    m_title = s->addSimpleText(m_titleText);
    QFont titleFont = font();
    titleFont.setPixelSize(scaledPx(kTitlePx));
    titleFont.setBold(true);
    m_title->setFont(titleFont);
    m_title->setBrush(p.text);
    m_title->setFlag(QGraphicsItem::ItemIgnoresTransformations);
    m_title->setZValue(11);
    m_title->setToolTip(m_titleText);
    for (std::size_t i = 0; i < axes.size(); ++i) {
        auto *bar = new AxisBarItem(this, static_cast<int>(i));
        bar->setZValue(11);
        s->addItem(bar);
        m_axisBars.push_back(bar);
    }

    // Above each group: its slice name (several slices). Below each row of slices: the DCN
    // band they hang from.
    // A box's name takes two lines (what it is; its counts), so boxes get a taller row.
    // Slice names are the mesh's largest structure, so they are set larger, with a row to match.
    // A share of the slice's height, so the name stays large when four slices share a small view.
    const double groupLabelH = groups > 1 ? (tpu ? std::max(1.5 * capH, 0.12 * groupH) : capH) : 0;
    const bool dcn = tpu && groups > 1; // slices hang from the data-center network
    const double head = groupLabelH;
    const double dcnH = dcn ? capH : 0;
    const double left = tpu ? 1.6 * capH : 0; // room for "y ↓"
    const double blocksBottom = static_cast<double>(rowsUsed) * cellH - gap; // below a group's top
    const QColor fabricFill = roleColor(Role::Data).lighter(170);
    // An NVLink domain of 36 GPUs or more is a rack (GB200 NVL36/NVL72), not a node.
    const bool rack = !tpu && size("gpu") >= 36;
    QColor frameInk = p.text;
    frameInk.setAlphaF(0.45);
    QPen framePen(frameInk, 1, Qt::DashLine);
    // Few, large domains: one pixel however far the fit zooms in. Many (DeepSeek's 256 nodes):
    // scene units, so they fade with the boxes instead of hatching the whole mesh.
    framePen.setCosmetic(items <= 32);
    double y = 0;
    for (std::int64_t g = 0; g < groups; ++g) {
        const double gx = left + static_cast<double>(g % groupsPerRow) * groupW;
        const double gy = head + static_cast<double>(g / groupsPerRow) * (groupH + head + dcnH);
        if (dcn) {
            // This slice's DCN link: a stem from its last row down to the band of its row.
            const double bandTop = gy + blocksBottom + 1.5 * gap;
            const double stemX = gx + std::min(static_cast<double>(perRow), static_cast<double>(items)) * cellW / 2;
            auto *stem = s->addRect(QRectF(stemX - dcnH / 4, gy + blocksBottom, dcnH / 2, bandTop - gy - blocksBottom),
                                    QPen(Qt::NoPen), fabricFill);
            stem->setZValue(-2);
            stem->setToolTip(tr("Slice %1's hosts on the data-center network (DCN)").arg(g));
        }
        if (dcn)
            // Short, so it keeps its size in a narrow group: the DCN band below names the link.
            addCaption(tr("slice %1").arg(g), QRectF(gx, gy - head, groupW - gap, groupLabelH),
                       Qt::AlignLeft | Qt::AlignVCenter, kSlicePx, true)
                ->setToolTip(tr("Slice %1, joined to the other slices over the data-center network (DCN)").arg(g));
        if (p.boxed) {
            // The box's name: the ranks its nodes share, and its counts.
            const std::int64_t firstNode = g * blocksPerGroup;
            QStringList ranks;
            for (auto it = nodeShares.rbegin(); it != nodeShares.rend(); ++it) {
                if (it->stride < blocksPerGroup)
                    continue;
                const std::int64_t rank = (firstNode / it->stride) % it->size;
                ranks << (it->role == Role::Pipeline ? tr("stage %1").arg(rank)
                                                     : roleLabel(it->role).toLower() + QLatin1Char(' ') + QString::number(rank));
            }
            const QString nodes = rack ? tr("%n racks", nullptr, static_cast<int>(blocksPerGroup))
                                       : tr("%n nodes", nullptr, static_cast<int>(blocksPerGroup));
            const QString chips = tr("%n GPUs", nullptr, static_cast<int>(blocksPerGroup * p.chipsPerBlock));
            const QString name = ranks.isEmpty() ? (rack ? tr("racks %1–%2") : tr("nodes %1–%2"))
                                                       .arg(firstNode)
                                                       .arg(firstNode + blocksPerGroup - 1)
                                                 : ranks.join(QStringLiteral(" · "));
            const QString text = name + QStringLiteral(" · ") + nodes + QStringLiteral(" · ") + chips;
            const double boxW = static_cast<double>(std::min(perRow, items)) * cellW - gap;
            const double boxH = static_cast<double>(rowsUsed) * cellH - gap;
            const QRectF boxRect = QRectF(gx, gy, boxW, boxH).adjusted(-gap / 2, -gap / 2, gap / 2, gap / 2);
            auto *box = new GroupBoxItem(this, boxRect, firstNode * p.chipsPerBlock, blocksPerGroup * p.chipsPerBlock,
                                         g % 2 == 1);
            box->setToolTip(text + QStringLiteral("\n") + tr("nodes %1–%2 inside; zoom in for them and their GPUs")
                                                          .arg(firstNode)
                                                          .arg(firstNode + blocksPerGroup - 1));
            s->addItem(box);
            m_boxes.push_back(box);
            m_boxNames << text;
            // Zoomed out, the name fills the tile in three short lines; once the nodes show, it
            // moves to one line above the box, clear of them.
            addCaption(name + QLatin1Char('\n') + nodes + QLatin1Char('\n') + chips,
                       boxRect.adjusted(gap / 2, gap / 2, -gap / 2, -gap / 2), Qt::AlignLeft | Qt::AlignTop)
                ->setData(kMaxPitchKey, kNodePitchPx);
            addCaption(name, QRectF(gx - gap / 2, gy - head - gap / 2, groupW - 2 * gap, groupLabelH),
                       Qt::AlignLeft | Qt::AlignVCenter)
                ->setData(kMinPitchKey, kNodePitchPx);
        }
        for (std::int64_t i = 0; i < items; ++i) {
            const double x = gx + static_cast<double>(i % perRow) * cellW;
            const double by = gy + static_cast<double>(i / perRow) * cellH + labelH;
            const std::int64_t first = g * blocksPerGroup + i * m_aggregate;
            const std::int64_t count = std::min(m_aggregate, (g + 1) * blocksPerGroup - first);
            auto *block = new ChipBlockItem(this, first, count, QRectF(x, by, blockW, blockH));
            s->addItem(block);
            m_blocks.push_back(block);
            if (tpu && blocksPerGroup > 1) {
                const std::int64_t z = first - g * blocksPerGroup;
                addCaption(count > 1 ? tr("z=%1–%2").arg(z).arg(z + count - 1) : tr("z=%1").arg(z),
                           QRectF(x, by - labelH, blockW / 2, labelH), Qt::AlignLeft | Qt::AlignVCenter);
            }
            if (!tpu && p.boxed) {
                // Named, unframed: the name shows with the node's chips.
                addCaption(rack ? tr("rack %1").arg(first) : tr("node %1").arg(first),
                           QRectF(x - 3, by - labelH - 1, blockW + 6, labelH - 3), Qt::AlignLeft | Qt::AlignBottom)
                    ->setData(kMinPitchKey, kNodePitchPx);
            } else if (!tpu && items <= 256) {
                // An NVLink domain: framed, with its node number when there are few enough to read.
                // Neutral ink: the frame is the hardware, not a role (it was Tensor's orange).
                auto *frame = s->addRect(QRectF(x - 3, by - 3, blockW + 6, blockH + 6), framePen);
                frame->setZValue(-1);
                addCaption(rack ? (count > 1 ? tr("racks %1-%2").arg(first).arg(first + count - 1) : tr("rack %1").arg(first))
                                : (count > 1 ? tr("nodes %1-%2").arg(first).arg(first + count - 1) : tr("node %1").arg(first)),
                           QRectF(x - 3, by - labelH - 1, blockW + 6, labelH - 3), Qt::AlignLeft | Qt::AlignBottom);
            }
        }
        y = std::max(y, gy + static_cast<double>(rowsUsed) * cellH);
    }
    if (dcn) {
        // The DCN bands, one under each row of slices, joined down the right-hand side.
        const std::int64_t gridRows = (groups + groupsPerRow - 1) / groupsPerRow;
        const double bandLeft = left;
        const double bandRight = left + static_cast<double>(std::min(groups, groupsPerRow)) * groupW - 2 * gap;
        QString dcn = tr("DCN: data-center network between slices");
        if (topo.chip().dcnBandwidth > 0)
            dcn += QStringLiteral(" · ") + qs(model::formatBytesPerSecond(topo.chip().dcnBandwidth)) + tr(" per chip");
        double firstBand = 0;
        double lastBand = 0;
        for (std::int64_t r = 0; r < gridRows; ++r) {
            const double bandTop = head + static_cast<double>(r) * (groupH + head + dcnH) + blocksBottom + 1.5 * gap;
            if (r == 0)
                firstBand = bandTop;
            lastBand = bandTop;
            auto *band = s->addRect(QRectF(bandLeft, bandTop, bandRight - bandLeft, dcnH), QPen(Qt::NoPen), fabricFill);
            band->setZValue(-2);
            band->setToolTip(dcn);
            if (r == 0) {
                auto *label = addCaption(dcn, QRectF(bandLeft + 0.2 * dcnH, bandTop, bandRight - bandLeft - 0.4 * dcnH, dcnH),
                                         Qt::AlignLeft | Qt::AlignVCenter);
                label->setBrush(QColor(0x20, 0x20, 0x20));
            }
        }
        if (gridRows > 1) {
            auto *riser = s->addRect(QRectF(bandRight, firstBand, dcnH, lastBand - firstBand + dcnH), QPen(Qt::NoPen),
                                     fabricFill);
            riser->setZValue(-2);
            riser->setToolTip(dcn);
        }
    }

    // Direction marks and wraparound links on the first block.
    if (!m_blocks.empty()) {
        const QRectF first = m_blocks.front()->rect();
        // Cosmetic, so the rings stay visible however far the mesh is zoomed out.
        QPen wrapPen(p.text, 1.5, Qt::DashLine);
        wrapPen.setCosmetic(true);
        if (tpu) {
            // "x →" shares the first layer's label row with its "z=0".
            addCaption(QStringLiteral("x →"), QRectF(first.center().x(), first.top() - labelH, first.width() / 2, labelH),
                       Qt::AlignRight | Qt::AlignVCenter);
            addCaption(QStringLiteral("y ↓"), QRectF(first.left() - 1.6 * capH, first.top(), 1.4 * capH, capH),
                       Qt::AlignRight | Qt::AlignVCenter);
            if (m_aggregate > 1)
                m_legendLines << tr("each tile: %1 layers of %2x%3 chips (z range above it)")
                                     .arg(m_aggregate)
                                     .arg(p.cols)
                                     .arg(p.rows);
            else if (size("z") > 1)
                m_legendLines << tr("x → and y ↓ within a layer; z → one layer per z");
            bool wraps = false;
            for (const auto &axis : axes) {
                if (!axis.wraps)
                    continue;
                QPainterPath path;
                if (axis.name == "x") {
                    path.moveTo(first.left() + p.cell / 2, first.bottom() + 2);
                    path.cubicTo(first.left(), first.bottom() + 12, first.right(), first.bottom() + 12,
                                 first.right() - p.cell / 2, first.bottom() + 2);
                } else if (axis.name == "y") {
                    path.moveTo(first.right() + 2, first.top() + p.cell / 2);
                    path.cubicTo(first.right() + 10, first.top(), first.right() + 10, first.bottom(), first.right() + 2,
                                 first.bottom() - p.cell / 2);
                } else if (axis.name == "z" && items > 1) {
                    // z runs from layer to layer: the ring closes from the last layer of the first
                    // slice back to its first, routed below the layers and up their left side.
                    const QRectF last = m_blocks[static_cast<std::size_t>(items - 1)]->rect();
                    const double below = first.top() + blocksBottom - labelH + 0.6 * gap;
                    const double side = first.left() - 0.5 * gap;
                    path.moveTo(last.center().x(), last.bottom() + 2);
                    path.lineTo(last.center().x(), below);
                    path.lineTo(side, below);
                    path.lineTo(side, first.center().y());
                    path.lineTo(first.left() - 2, first.center().y());
                    addCaption(tr("z ring: z=%1 → z=0").arg(size("z") - 1),
                               QRectF(side, below, std::max(last.center().x() - side, first.width()), 0.8 * gap),
                               Qt::AlignLeft | Qt::AlignTop);
                } else {
                    continue;
                }
                auto *arc = s->addPath(path, wrapPen);
                arc->setToolTip(tr("Wraparound link on axis %1: a ring, not a line").arg(qs(axis.name)));
                wraps = true;
            }
            if (wraps)
                m_legendLines << tr("dashed arcs: wraparound links (the axis is a ring), drawn on the first layer");
        } else {
            // The fabric band joins the domains: a one-domain plan sends nothing over it, and its
            // band, as wide as one fitted-large domain, would be an unlabelled block.
            if (blocks > 1) {
                // As wide as the domains, as tall as a chip at least.
                double right = first.right() + 3;
                for (const auto *b : m_blocks)
                    right = std::max(right, b->rect().right() + 3);
                const double bandH = std::max(p.pitch, meshWidth / 45);
                auto *band = s->addRect(QRectF(-3, y, right + 3, bandH), QPen(Qt::NoPen), roleColor(Role::Data).lighter(170));
                band->setZValue(-2);
                QString fabric = tr("scale-out network (fat tree)");
                if (topo.chip().scaleOut)
                    fabric += QStringLiteral(" · ")
                              + qs(model::formatBytesPerSecond(topo.chip().scaleOut->nodeEgressBandwidth))
                              + (rack ? tr(" per rack") : tr(" per node"));
                auto *label = addCaption(fabric, QRectF(0.2 * bandH, y, right - 0.4 * bandH, bandH), Qt::AlignLeft | Qt::AlignVCenter);
                label->setBrush(QColor(0x20, 0x20, 0x20));
            }
            // Past kMaxItems nodes a box stands for several: say what it holds.
            if (m_aggregate > 1)
                m_legendLines << (rack ? tr("each box: %1 racks = %2 GPUs%3") : tr("each box: %1 nodes = %2 GPUs%3"))
                                     .arg(m_aggregate)
                                     .arg(m_aggregate * size("gpu"))
                                     .arg(blocks % m_aggregate ? tr(" (the last box fewer)") : QString());
            else if (p.boxed)
                m_legendLines << tr("each box: %1, %2 %3 (NVLink domains of %4 GPUs); zoom in for them")
                                     .arg(boxWhat)
                                     .arg(blocksPerGroup)
                                     .arg(rack ? tr("racks") : tr("nodes"))
                                     .arg(size("gpu"));
            else if (rack)
                m_legendLines << tr("each box: one rack, an NVLink domain of %1 GPUs").arg(size("gpu"));
            else
                m_legendLines << tr("each box: one NVLink domain of %1 GPUs").arg(size("gpu"));
        }
    }
    // The mesh's extent: everything drawn in scene units, plus the room kept for captions.
    m_meshRect = QRectF();
    for (const QGraphicsItem *item : s->items())
        if (!(item->flags() & QGraphicsItem::ItemIgnoresTransformations))
            m_meshRect |= item->sceneBoundingRect();
    for (const auto &c : m_captions)
        m_meshRect |= c.slot;
    if (!m_legendLines.isEmpty()) {
        m_legend = s->addSimpleText(QString());
        QFont legendFont = font();
        legendFont.setPixelSize(scaledPx(kCaptionPx));
        m_legend->setFont(legendFont);
        m_legend->setBrush(p.text);
        m_legend->setFlag(QGraphicsItem::ItemIgnoresTransformations);
        m_legend->setZValue(11);
        m_legend->setToolTip(m_legendLines.join(QLatin1Char('\n')));
    } else {
        m_legend = nullptr;
    }
    fitMesh();
}

QGraphicsSimpleTextItem *MeshCanvas::addCaption(const QString &text, const QRectF &slot, Qt::Alignment align, int px,
                                                bool bold)
{
    auto *item = scene()->addSimpleText(text);
    QFont f = font();
    f.setPixelSize(scaledPx(px));
    f.setBold(bold);
    item->setFont(f);
    item->setBrush(m_paint->text);
    item->setFlag(QGraphicsItem::ItemIgnoresTransformations);
    item->setToolTip(text);
    m_captions.push_back({item, slot, align});
    return item;
}

void MeshCanvas::layoutHeader()
{
    if (!m_title)
        return;
    const int width = viewport()->width();
    const int inner = std::max(1, width - 2 * kMargin);
    const auto at = [this](int x, int y) { return mapToScene(QPoint(x, y)); };
    int y = kMargin / 2;
    m_title->setText(QFontMetricsF(m_title->font()).elidedText(m_titleText, Qt::ElideRight, inner));
    m_title->setPos(at(kMargin, y));
    y += static_cast<int>(std::ceil(m_title->boundingRect().height())) + 2;
    // As many bars in a row as fit at a readable width; the rest wrap to further rows.
    const int n = static_cast<int>(m_axisBars.size());
    if (n > 0) {
        const int barH = scaledPx(kBarHeight);
        const int perRow = std::clamp((inner + kMargin) / (scaledPx(kBarMinWidth) + kMargin), 1, n);
        const int rows = (n + perRow - 1) / perRow;
        const int barW = std::min(scaledPx(kBarMaxWidth), (inner - (perRow - 1) * kMargin) / perRow);
        for (int i = 0; i < n; ++i) {
            const QRect r(kMargin + (i % perRow) * (barW + kMargin), y + (i / perRow) * (barH + 4), barW, barH);
            m_axisBars[static_cast<std::size_t>(i)]->setViewRect(r);
            m_axisBars[static_cast<std::size_t>(i)]->setPos(at(r.left(), r.top()));
        }
        y += rows * (barH + 4);
    }
    if (m_legend) {
        QStringList lines;
        const QFontMetricsF fm(m_legend->font());
        for (const QString &line : m_legendLines)
            lines << fm.elidedText(line, Qt::ElideRight, inner);
        m_legend->setText(lines.join(QLatin1Char('\n')));
        m_legend->setPos(at(kMargin, y));
        y += static_cast<int>(std::ceil(m_legend->boundingRect().height()));
    }
    m_headerHeight = y + kMargin / 2;
    m_headerBack->setRect(QRectF(0, 0, width, m_headerHeight));
    m_headerBack->setPos(at(0, 0));
}

void MeshCanvas::fitCaptions()
{
    const double s = transform().m11();
    for (const auto &c : m_captions) {
        const QRectF br = c.item->boundingRect();
        const double f = std::min({1.0, c.slot.width() * s / br.width(), c.slot.height() * s / br.height()});
        // Some captions belong to one zoom only (a box's name inside it, or above it with its nodes).
        const double pitchPx = s * m_paint->pitch;
        const QVariant minPitch = c.item->data(kMinPitchKey);
        const QVariant maxPitch = c.item->data(kMaxPitchKey);
        c.item->setVisible(f * c.item->font().pixelSize() >= kMinCaptionPx && (!minPitch.isValid() || pitchPx >= minPitch.toDouble())
                           && (!maxPitch.isValid() || pitchPx < maxPitch.toDouble()));
        c.item->setScale(f);
        const double w = br.width() * f / s;
        const double h = br.height() * f / s;
        const double x = c.align & Qt::AlignRight     ? c.slot.right() - w
                         : c.align & Qt::AlignHCenter ? c.slot.center().x() - w / 2
                                                      : c.slot.left();
        const double y = c.align & Qt::AlignBottom    ? c.slot.bottom() - h
                         : c.align & Qt::AlignVCenter ? c.slot.center().y() - h / 2
                                                      : c.slot.top();
        c.item->setPos(x, y);
    }
}

void MeshCanvas::viewChanged()
{
    if (m_meshRect.isEmpty())
        return;
    layoutHeader();
    // The scene rectangle reaches above the mesh by the header's height at this zoom, so the
    // top of the mesh can always be scrolled clear of the header.
    const double s = transform().m11();
    setSceneRect(m_meshRect.adjusted(-kMargin / s, -(m_headerHeight + kMargin) / s, kMargin / s, kMargin / s));
    layoutHeader();
    fitCaptions();
}

void MeshCanvas::updateAxisBars()
{
    const auto &p = *m_paint;
    const auto &axes = p.plan.topology.axes();
    for (auto *bar : m_axisBars) {
        const auto &axis = axes[static_cast<std::size_t>(bar->axis())];
        QString title = qs(axis.name) + QStringLiteral(" · ") + QString::number(axis.size) + QStringLiteral(" · ")
                        + qs(std::string(model::linkName(axis.link)));
        if (axis.wraps)
            title += tr(" · ring");
        bar->setContent(title, p.groups ? p.groups->sharesOf(bar->axis()) : std::vector<model::MeshGroups::AxisShare>{},
                        axis.size);
        bar->setToolTip(bar->label() + QStringLiteral("\n")
                        + tr("Drop a role here to give it this axis; drop it on either end to split the axis."));
    }
}

void MeshCanvas::fitMesh()
{
    m_userZoomed = false;
    // A fitted mesh needs no scroll bars. Left as needed, one that appears narrows the viewport,
    // the refit shrinks the scene, the bar goes, and the view resizes itself for ever (seen at
    // 1024x700 with the search dock open).
    setScrollBarsShown(false);
    if (m_meshRect.isEmpty())
        return;
    layoutHeader(); // its height depends on the width only
    const QRectF area = QRectF(viewport()->rect()).adjusted(kMargin, m_headerHeight + kMargin, -kMargin, -kMargin);
    if (area.width() < 1 || area.height() < 1)
        return;
    // Small meshes (8 chips) fill the view too, but chips stop growing at kMaxPitchPx.
    const double s = std::min({area.width() / m_meshRect.width(), area.height() / m_meshRect.height(),
                               kMaxPitchPx / m_paint->pitch});
    setTransform(QTransform::fromScale(s, s));
    viewChanged();
}

MeshCanvas::DropTarget MeshCanvas::dropTargetAt(const QPoint &viewportPos) const
{
    for (const auto *bar : m_axisBars) {
        const QRect r = bar->viewRect();
        if (!r.contains(viewportPos))
            continue;
        const double f = (viewportPos.x() - r.left() + 0.5) / r.width();
        return {bar->axis(), f < kSplitZone || f > 1 - kSplitZone};
    }
    return {};
}

int MeshCanvas::scaledPx(int px) const
{
    return static_cast<int>(std::lround(px * m_paint->textScale));
}

void MeshCanvas::setTextScale(double scale)
{
    scale = std::clamp(scale, 1.0, 4.0);
    if (scale == m_paint->textScale)
        return;
    m_paint->textScale = scale;
    // Captions and the header are made at their size when the scene is built: build it again.
    if (!m_meshKey.empty()) {
        rebuildScene();
        updateAxisBars();
    }
}

double MeshCanvas::textScale() const
{
    return m_paint->textScale;
}

std::int64_t MeshCanvas::markableChipAt(const QPoint &viewportPos) const
{
    const std::int64_t chip = chipAt(viewportPos);
    if (chip >= 0 || viewportPos.y() < m_headerHeight)
        return chip;
    // A box of nodes drawn as one tile stands for its first chip: marking it marks its groups.
    const QPointF pos = mapToScene(viewportPos);
    for (QGraphicsItem *item : scene()->items(pos))
        if (const auto *box = dynamic_cast<GroupBoxItem *>(item))
            return box->firstChip();
    return -1;
}

std::int64_t MeshCanvas::chipAt(const QPoint &viewportPos) const
{
    if (viewportPos.y() < m_headerHeight)
        return -1; // chips scrolled under the header are hidden
    const QPointF pos = mapToScene(viewportPos);
    for (QGraphicsItem *item : scene()->items(pos)) {
        if (const auto *block = dynamic_cast<ChipBlockItem *>(item))
            return block->chipAt(pos);
    }
    return -1;
}

QRectF MeshCanvas::chipRect(std::int64_t chip) const
{
    const auto &p = *m_paint;
    if (m_aggregate > 1 || chip < 0 || p.chipsPerBlock <= 0)
        return {};
    const std::int64_t block = chip / p.chipsPerBlock;
    if (block >= static_cast<std::int64_t>(m_blocks.size()))
        return {};
    return m_blocks[static_cast<std::size_t>(block)]->cellRect(chip % p.chipsPerBlock);
}

QRectF MeshCanvas::boxRect(int box) const
{
    return box >= 0 && box < boxCount() ? m_boxes[static_cast<std::size_t>(box)]->rect() : QRectF();
}

QRectF MeshCanvas::axisBarRect(int axis) const
{
    for (const auto *bar : m_axisBars)
        if (bar->axis() == axis)
            return mapToScene(bar->viewRect()).boundingRect();
    return {};
}

QStringList MeshCanvas::axisLabels() const
{
    QStringList out;
    for (const auto *bar : m_axisBars)
        out << bar->label();
    return out;
}

void MeshCanvas::setHoveredChip(std::int64_t chip)
{
    auto &p = *m_paint;
    m_hovered = chip;
    p.hovered = chip;
    if (chip >= 0 && p.groups) {
        for (Role role : model::kRoles)
            p.hoveredGroup[ri(role)] = p.groups->groupOf(chip, role);
        p.hoveredStage = p.groups->rankIn(chip, Role::Pipeline);
    }
    scene()->update();
}

bool MeshCanvas::isHighlighted(std::int64_t chip, Role role) const
{
    const auto &p = *m_paint;
    if (m_hovered < 0 || !p.groups || p.plan.parallelism.degree(role) <= 1)
        return false;
    if (role == Role::Pipeline)
        return p.groups->rankIn(chip, role) == p.hoveredStage;
    return p.groups->groupOf(chip, role) == p.hoveredGroup[ri(role)];
}

QString MeshCanvas::chipHeading(std::int64_t chip) const
{
    const auto &p = *m_paint;
    const auto &axes = p.plan.topology.axes();
    QStringList coords;
    if (p.groups) {
        const auto c = p.groups->coordinates(chip);
        for (std::size_t i = 0; i < axes.size(); ++i)
            coords << qs(axes[i].name) + QLatin1Char('=') + QString::number(c[i]);
    }
    return tr("Chip %1 (%2)").arg(chip).arg(coords.join(QLatin1Char(' ')));
}

QString MeshCanvas::describeChip(std::int64_t chip) const
{
    const auto &p = *m_paint;
    if (chip < 0 || chip >= p.plan.topology.chipCount())
        return {};
    QString text = chipHeading(chip);
    if (!p.groups)
        return text;
    QStringList ranks;
    for (Role role : model::kRoles) {
        const int degree = p.plan.parallelism.degree(role);
        if (degree <= 1)
            continue;
        const auto rank = p.groups->rankIn(chip, role);
        ranks << (role == Role::Pipeline ? tr("pipeline stage %1 of %2").arg(rank).arg(degree)
                                         : tr("%1 rank %2 of %3").arg(roleLabel(role)).arg(rank).arg(degree));
    }
    if (!ranks.isEmpty())
        text += QStringLiteral(" · ") + ranks.join(QStringLiteral(", "));
    // What it holds: the chip kind of its pipeline stage (first, middle, last) or of every chip.
    if (!p.kinds.empty()) {
        const model::ChipKind *kind = &p.kinds.front();
        const int stages = p.plan.parallelism.degree(Role::Pipeline);
        if (p.training && stages > 1 && p.kinds.size() > 1) {
            const auto stage = p.groups->rankIn(chip, Role::Pipeline);
            kind = stage == 0 ? &p.kinds.front() : stage == stages - 1 ? &p.kinds.back() : &p.kinds[1];
        }
        const auto &m = kind->memory;
        const auto b = [](double bytes) { return qs(model::formatBytes(bytes, true)); };
        QStringList held;
        if (m.params > 0)
            held << tr("params %1").arg(b(m.params));
        if (m.grads > 0)
            held << tr("grads %1").arg(b(m.grads));
        if (m.optimizer > 0)
            held << tr("optimizer %1").arg(b(m.optimizer));
        if (m.activations > 0)
            held << tr("activations %1").arg(b(m.activations));
        if (m.kvCache > 0)
            held << tr("KV cache %1").arg(b(m.kvCache));
        text += QStringLiteral("\n") + tr("Holds %1 = %2 of %3 HBM%4")
                                           .arg(held.join(QStringLiteral(" + ")), b(m.total), b(m.capacity),
                                                m.fits ? QString() : tr(" — does not fit"));
    }
    return text;
}

QString MeshCanvas::chipSummary(std::int64_t chip) const
{
    const auto &p = *m_paint;
    if (chip < 0 || chip >= p.plan.topology.chipCount())
        return {};
    QString line = chipHeading(chip);
    if (p.groups && p.plan.parallelism.degree(Role::Pipeline) > 1)
        line += tr(" · stage %1").arg(p.groups->rankIn(chip, Role::Pipeline));
    return line;
}

void MeshCanvas::setDropHover(DropTarget target)
{
    auto &p = *m_paint;
    if (p.dropHover.axis == target.axis && p.dropHover.split == target.split)
        return;
    p.dropHover = target;
    for (auto *bar : m_axisBars)
        bar->update();
}

void MeshCanvas::dragEnterEvent(QDragEnterEvent *event)
{
    const QMimeData *mime = event->mimeData();
    if (decodeModel(mime) || decodeHardware(mime) || decodeRole(mime) || decodeLocalFile(mime)) {
        event->setDropAction(Qt::CopyAction);
        event->accept();
        return;
    }
    event->ignore();
}

void MeshCanvas::dragMoveEvent(QDragMoveEvent *event)
{
    const QMimeData *mime = event->mimeData();
    if (decodeRole(mime)) {
        // A role only lands on an axis bar.
        const DropTarget target = dropTargetAt(event->position().toPoint());
        setDropHover(target);
        if (target.axis < 0) {
            event->ignore();
            return;
        }
    }
    event->setDropAction(Qt::CopyAction);
    event->accept();
}

void MeshCanvas::dragLeaveEvent(QDragLeaveEvent *event)
{
    setDropHover({});
    QGraphicsView::dragLeaveEvent(event);
}

void MeshCanvas::dropEvent(QDropEvent *event)
{
    const QMimeData *mime = event->mimeData();
    setDropHover({});
    if (const auto role = decodeRole(mime)) {
        const DropTarget target = dropTargetAt(event->position().toPoint());
        if (target.axis < 0) {
            event->ignore();
            return;
        }
        const auto &axis = m_paint->plan.topology.axes()[static_cast<std::size_t>(target.axis)];
        event->acceptProposedAction();
        emit roleDropped(*role, qs(axis.name), target.split);
    } else if (const auto modelRef = decodeModel(mime)) {
        event->acceptProposedAction();
        emit modelDropped(*modelRef);
    } else if (const auto hardware = decodeHardware(mime)) {
        event->acceptProposedAction();
        emit hardwareDropped(*hardware);
    } else if (const auto file = decodeLocalFile(mime)) {
        event->acceptProposedAction();
        emit fileDropped(*file);
    } else {
        event->ignore();
    }
}

void MeshCanvas::mouseMoveEvent(QMouseEvent *event)
{
    QGraphicsView::mouseMoveEvent(event);
    const std::int64_t chip = chipAt(event->position().toPoint());
    if (chip != m_hovered) {
        setHoveredChip(chip);
        // A tooltip of its own, by the pointer: the view hands tooltip events to the scene's
        // items, so a viewport tooltip never showed, and the status bar cut the lines short.
        if (chip >= 0)
            QToolTip::showText(event->globalPosition().toPoint(), describeChip(chip), viewport());
        else
            QToolTip::hideText();
        emit chipHovered(chip, chipSummary(chip));
    }
}

void MeshCanvas::leaveEvent(QEvent *event)
{
    QGraphicsView::leaveEvent(event);
    if (m_hovered >= 0) {
        setHoveredChip(-1);
        QToolTip::hideText();
        emit chipHovered(-1, QString());
    }
}

void MeshCanvas::wheelEvent(QWheelEvent *event)
{
    const double factor = std::pow(1.0015, event->angleDelta().y());
    scale(factor, factor);
    m_userZoomed = true;
    setScrollBarsShown(true);
    viewChanged();
    event->accept();
}

void MeshCanvas::setScrollBarsShown(bool asNeeded)
{
    const Qt::ScrollBarPolicy policy = asNeeded ? Qt::ScrollBarAsNeeded : Qt::ScrollBarAlwaysOff;
    if (horizontalScrollBarPolicy() != policy)
        setHorizontalScrollBarPolicy(policy);
    if (verticalScrollBarPolicy() != policy)
        setVerticalScrollBarPolicy(policy);
}

void MeshCanvas::resizeEvent(QResizeEvent *event)
{
    QGraphicsView::resizeEvent(event);
    if (!m_userZoomed)
        fitMesh();
    else
        viewChanged();
}

void MeshCanvas::scrollContentsBy(int dx, int dy)
{
    QGraphicsView::scrollContentsBy(dx, dy);
    layoutHeader(); // the header stays put while the mesh pans under it
}

} // namespace meshplan::views
