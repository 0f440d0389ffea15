#include "chartstyle.h"
#include "atomicwrite.h"

#include <qcustomplot.h>

#include <QBuffer>
#include <QFileInfo>
#include <QFontMetricsF>
#include <QPageLayout>
#include <QPdfWriter>
#include <QRegularExpression>
#include <QSvgGenerator>

#include <algorithm>
#include <cmath>

namespace meshplan::views {

bool isDark(const QPalette &palette)
{
    return palette.color(QPalette::Window).lightness() < palette.color(QPalette::WindowText).lightness();
}

void applyChartStyle(QCustomPlot *plot, const QPalette &palette)
{
    const QColor background = palette.color(QPalette::Base);
    const QColor text = palette.color(QPalette::Text);
    QColor grid = text;
    grid.setAlpha(isDark(palette) ? 60 : 40);
    QColor subGrid = text;
    subGrid.setAlpha(18);
    plot->setBackground(background);
    for (QCPAxisRect *rect : plot->axisRects()) {
        rect->setBackground(background);
        for (QCPAxis *axis : rect->axes()) {
            axis->setBasePen(QPen(text, 1));
            axis->setTickPen(QPen(text, 1));
            axis->setSubTickPen(QPen(text, 1));
            axis->setTickLabelColor(text);
            axis->setLabelColor(text);
            axis->grid()->setPen(QPen(grid, 1, Qt::DotLine));
            axis->grid()->setSubGridPen(QPen(subGrid, 1, Qt::DotLine));
            axis->grid()->setZeroLinePen(Qt::NoPen);
        }
    }
    if (plot->legend) {
        QColor legendBack = background;
        legendBack.setAlpha(220);
        plot->legend->setBrush(legendBack);
        plot->legend->setBorderPen(QPen(grid));
        plot->legend->setTextColor(text);
    }
    for (int i = 0; i < plot->plotLayout()->elementCount(); ++i)
        if (auto *title = qobject_cast<QCPTextElement *>(plot->plotLayout()->elementAt(i)))
            title->setTextColor(text);
}

namespace {

// QCPAxisTickerLog puts ticks at odd values (1580, 2000) on a range of a decade or two, and
// precision 0 then labels two of them "2·10³". On short ranges this ticks 1, 2, 5 x 10^k and
// sub-ticks every integer mantissa, so every label is exact.
class DecadeTicker : public QCPAxisTickerLog
{
protected:
    QVector<double> createTickVector(double tickStep, const QCPRange &range) override
    {
        m_short = range.lower > 0 && range.upper / range.lower < 1000;
        if (!m_short)
            return QCPAxisTickerLog::createTickVector(tickStep, range);
        QVector<double> ticks;
        const int first = static_cast<int>(std::floor(std::log10(range.lower)));
        const int last = static_cast<int>(std::ceil(std::log10(range.upper)));
        for (int k = first; k <= last; ++k)
            for (double m : {1.0, 2.0, 5.0})
                ticks.push_back(m * std::pow(10.0, k));
        return ticks;
    }
    QVector<double> createSubTickVector(int subTickCount, const QVector<double> &ticks) override
    {
        if (!m_short || ticks.size() < 2)
            return QCPAxisTickerLog::createSubTickVector(subTickCount, ticks);
        QVector<double> subTicks;
        const int first = static_cast<int>(std::floor(std::log10(ticks.front()) + 1e-9));
        const int last = static_cast<int>(std::floor(std::log10(ticks.back()) + 1e-9));
        for (int k = first; k <= last; ++k)
            for (double m : {3.0, 4.0, 6.0, 7.0, 8.0, 9.0}) {
                const double v = m * std::pow(10.0, k);
                if (v > ticks.front() && v < ticks.back())
                    subTicks.push_back(v);
            }
        return subTicks;
    }

private:
    bool m_short = false;
};

/// Labels ticks in units rather than powers of ten.
class UnitTicker : public DecadeTicker
{
public:
    explicit UnitTicker(LogLabels labels)
        : m_labels(labels)
    {}

protected:
    QString getTickLabel(double tick, const QLocale &locale, QChar formatChar, int precision) override
    {
        const QString label = logTickLabel(tick, m_labels);
        return label.isEmpty() ? DecadeTicker::getTickLabel(tick, locale, formatChar, precision) : label;
    }

private:
    LogLabels m_labels;
};

QString compact(double v, double unit, const char *suffix)
{
    QString digits = QString::number(v / unit, 'g', 3);
    return digits + QLatin1String(suffix);
}

} // namespace

QString logTickLabel(double value, LogLabels labels)
{
    if (labels == LogLabels::PowersOfTen || !(value > 0) || !std::isfinite(value))
        return QString();
    if (labels == LogLabels::Seconds) {
        if (value >= 1)
            return compact(value, 1, " s");
        if (value >= 1e-3)
            return compact(value, 1e-3, " ms");
        if (value >= 1e-6)
            return compact(value, 1e-6, " µs");
        return compact(value, 1e-9, " ns");
    }
    if (value >= 1e9)
        return compact(value, 1e9, "G");
    if (value >= 1e6)
        return compact(value, 1e6, "M");
    if (value >= 1e3)
        return compact(value, 1e3, "k");
    return compact(value, 1, "");
}

void setLogAxis(QCPAxis *axis, LogLabels labels)
{
    axis->setScaleType(QCPAxis::stLogarithmic);
    QSharedPointer<QCPAxisTickerLog> ticker(labels == LogLabels::PowersOfTen ? new DecadeTicker : new UnitTicker(labels));
    ticker->setLogBase(10);
    ticker->setSubTickCount(8);
    axis->setTicker(ticker);
    axis->setNumberFormat(QStringLiteral("eb"));
    axis->setNumberPrecision(0);
}

bool loggable(double value)
{
    return std::isfinite(value) && value > 0;
}

void setLogRange(QCPAxis *axis, double lo, double hi, double pad)
{
    if (!loggable(lo) || !loggable(hi)) {
        axis->setRange(1, 10);
        return;
    }
    if (hi < lo)
        std::swap(lo, hi);
    if (hi / lo < 10) {
        const double mid = std::sqrt(hi * lo);
        lo = mid / std::sqrt(10.0);
        hi = mid * std::sqrt(10.0);
    }
    const double f = std::pow(10.0, pad * std::log10(hi / lo));
    axis->setRange(std::max(lo / f, QCPRange::minRange * 10), std::min(hi * f, QCPRange::maxRange / 10));
}

void showChartMessage(QCustomPlot *plot, const QString &message)
{
    plot->clearPlottables();
    plot->clearItems();
    plot->xAxis->setVisible(false);
    plot->yAxis->setVisible(false);
    plot->yAxis2->setVisible(false);
    plot->legend->setVisible(false);
    auto *text = new QCPItemText(plot);
    text->position->setType(QCPItemPosition::ptAxisRectRatio);
    text->position->setCoords(0.5, 0.5);
    text->setText(message);
    text->setColor(plot->palette().color(QPalette::Text));
    plot->replot(QCustomPlot::rpQueuedReplot);
}

void showChartAxes(QCustomPlot *plot)
{
    plot->xAxis->setVisible(true);
    plot->yAxis->setVisible(true);
    plot->legend->setVisible(true);
}

void putLegendBeside(QCustomPlot *plot)
{
    plot->axisRect()->insetLayout()->take(plot->legend);
    auto *side = new QCPLayoutGrid;
    plot->plotLayout()->addElement(0, 1, side);
    plot->plotLayout()->setColumnStretchFactor(1, 0.001);
    side->addElement(0, 0, plot->legend);
    side->addElement(1, 0, new QCPLayoutElement(plot)); // keeps the legend at the top
    side->setRowStretchFactor(0, 0.001);
    side->setMargins(QMargins(0, 12, 6, 0));
}

constexpr double kDarkSeriesLuma = 130;

QColor seriesColor(const QColor &color, const QPalette &palette)
{
    if (!isDark(palette))
        return color;
    // Raised in HSL lightness (hue and saturation stay) until its luma reaches 130 of 255, about
    // 4.5:1 against the dark base; amber and sky blue are there already, the deep blue is not.
    const auto luma = [](const QColor &c) { return 0.2126 * c.red() + 0.7152 * c.green() + 0.0722 * c.blue(); };
    QColor lifted = color.toHsl();
    while (luma(lifted.toRgb()) < kDarkSeriesLuma && lifted.lightness() < 245)
        lifted.setHsl(lifted.hslHue(), lifted.hslSaturation(), lifted.lightness() + 5);
    return lifted.toRgb();
}

QPalette darkPalette(QPalette palette)
{
    const QColor window(0x2b, 0x2d, 0x31);
    const QColor base(0x1e, 0x1f, 0x22);
    const QColor text(0xe6, 0xe6, 0xe6);
    palette.setColor(QPalette::Window, window);
    palette.setColor(QPalette::WindowText, text);
    palette.setColor(QPalette::Base, base);
    palette.setColor(QPalette::AlternateBase, window);
    palette.setColor(QPalette::Text, text);
    palette.setColor(QPalette::Button, window);
    palette.setColor(QPalette::ButtonText, text);
    palette.setColor(QPalette::ToolTipBase, base);
    palette.setColor(QPalette::ToolTipText, text);
    palette.setColor(QPalette::Mid, QColor(0x55, 0x58, 0x5e));
    palette.setColor(QPalette::Highlight, QColor(0x35, 0x84, 0xe4));
    palette.setColor(QPalette::HighlightedText, Qt::white);
    // Fusion's links are #0000ff, unreadable on the dark base (the scenario note's book link).
    palette.setColor(QPalette::Link, QColor(0x6c, 0xb4, 0xff));
    palette.setColor(QPalette::LinkVisited, QColor(0xb4, 0x9c, 0xff));
    palette.setColor(QPalette::Disabled, QPalette::Text, QColor(0x80, 0x80, 0x80));
    palette.setColor(QPalette::Disabled, QPalette::WindowText, QColor(0x80, 0x80, 0x80));
    palette.setColor(QPalette::Disabled, QPalette::ButtonText, QColor(0x80, 0x80, 0x80)); // a disabled Cancel reads as one
    return palette;
}

namespace {

/// QSvgGenerator names only the font's family; a reader without that font falls back to its
/// default face, a serif one in browsers. A generic fallback after each family keeps it sans.
/// Fonts in an SVG end in a generic family, so a viewer without DejaVu still draws sans-serif.
QByteArray addGenericFontFamily(const QByteArray &bytes)
{
    QString svg = QString::fromUtf8(bytes);
    static const QRegularExpression family(QStringLiteral("font-family=\"([^\"]*)\""));
    svg.replace(family, QStringLiteral("font-family=\"\\1, sans-serif\""));
    return svg.toUtf8();
}

} // namespace

double presentationScale(QSize size)
{
    return std::max(1.0, std::min(size.width() / 1200.0, size.height() / 750.0));
}

std::optional<QString> exportChart(QCustomPlot *plot, const QString &path, int width, int height, double scale,
                                   const QString &title)
{
    // The title row exists only while the file is written; the widget on screen is left as it was.
    struct TitleRow {
        QCustomPlot *plot;
        QCPTextElement *element = nullptr;
        TitleRow(QCustomPlot *p, const QString &text, double width)
            : plot(p)
        {
            if (text.isEmpty())
                return;
            QFont bold = plot->font();
            bold.setBold(true);
            // The title shares the first column with the plot, beside the legend's: a long plan
            // title is elided to what is left, or it would push the legend off the page.
            const bool legendBeside = plot->legend && plot->legend->visible() && plot->legend->layout() != plot->axisRect()->insetLayout();
            const double room = width - (legendBeside ? plot->legend->minimumOuterSizeHint().width() + 12 : 0) - 24;
            const QString shown = QFontMetricsF(bold).elidedText(text, Qt::ElideRight, std::max(80.0, room));
            plot->plotLayout()->insertRow(0);
            element = new QCPTextElement(plot, shown);
            element->setFont(bold);
            element->setTextColor(plot->palette().color(QPalette::Text));
            plot->plotLayout()->addElement(0, 0, element);
            plot->replot(QCustomPlot::rpImmediateRefresh);
        }
        ~TitleRow()
        {
            if (!element)
                return;
            plot->plotLayout()->remove(element);
            plot->plotLayout()->simplify();
            plot->replot(QCustomPlot::rpQueuedReplot);
        }
    } titleRow(plot, title, width);

    const QString suffix = QFileInfo(path).suffix().toLower();
    if (QFileInfo(path).completeBaseName().isEmpty())
        return QStringLiteral("%1: needs a file name before the extension").arg(path);
    const int outW = static_cast<int>(std::lround(width * scale));
    const int outH = static_cast<int>(std::lround(height * scale));
    // Drawn into memory first, then written atomically: a full disk leaves the old file as it was.
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    bool ok = false;
    if (suffix == QLatin1String("png")) {
        QPixmap image = plot->toPixmap(width, height, scale);
        if (image.size() != QSize(outW, outH)) // rounding of width x scale: at most a pixel
            image = image.scaled(outW, outH, Qt::IgnoreAspectRatio, Qt::SmoothTransformation);
        ok = !image.isNull() && image.save(&buffer, "PNG");
    } else if (suffix == QLatin1String("pdf")) {
        // As QCustomPlot's savePdf (a printer at screen resolution, one page of width x height
        // device pixels), but into the buffer: at 96 dpi text is laid out as on screen.
        constexpr int kDpi = 96;
        QPdfWriter writer(&buffer);
        writer.setResolution(kDpi);
        writer.setCreator(QStringLiteral("Meshplan"));
        writer.setTitle(title.isEmpty() ? QStringLiteral("Meshplan chart") : title);
        writer.setPageLayout(QPageLayout(QPageSize(QSizeF(width, height) * (72.0 / kDpi), QPageSize::Point),
                                         QPageLayout::Portrait, QMarginsF(0, 0, 0, 0)));
        QCPPainter painter;
        ok = painter.begin(&writer);
        if (ok) {
            painter.setMode(QCPPainter::pmVectorized);
            painter.setMode(QCPPainter::pmNoCaching);
            painter.setMode(QCPPainter::pmNonCosmetic);
            painter.setWindow(QRect(0, 0, width, height));
            plot->toPainter(&painter, width, height);
            ok = painter.end();
        }
    } else if (suffix == QLatin1String("svg")) {
        // QCustomPlot 2.1 has no saveSvg: paint into a QSvgGenerator (qt-and-platform-notes 2.2).
        // At 96 dpi font sizes in the file match the PNG's (the generator's default is 72).
        QSvgGenerator generator;
        generator.setOutputDevice(&buffer);
        generator.setResolution(96);
        generator.setSize(QSize(outW, outH));
        generator.setViewBox(QRect(0, 0, width, height));
        generator.setTitle(QStringLiteral("Meshplan chart"));
        QCPPainter painter;
        ok = painter.begin(&generator);
        if (ok) {
            plot->toPainter(&painter, width, height);
            ok = painter.end();
        }
        if (ok)
            bytes = addGenericFontFamily(bytes);
    } else {
        return QStringLiteral("%1: unknown format \"%2\" (use .png, .pdf or .svg)").arg(path, suffix);
    }
    if (!ok || bytes.isEmpty())
        return QStringLiteral("%1: the chart could not be drawn; nothing was written").arg(path);
    if (auto error = writeFileAtomically(path, bytes))
        return error;
    return std::nullopt;
}

} // namespace meshplan::views
