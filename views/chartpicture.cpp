#include "chartpicture.h"

#include <qcustomplot.h>

#include <QEvent>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace meshplan::views {

namespace {

// The layout a chart is drawn at before scaling: small enough that its text, scaled to fill
// half of a 1920x1080 screen, reads from the back of a room.
constexpr double kDesignWidth = 560;
constexpr double kDesignHeight = 300;

} // namespace

ChartPicture::ChartPicture(QWidget *parent)
    : QWidget(parent)
{
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    setAttribute(Qt::WA_OpaquePaintEvent);
}

ChartPicture::~ChartPicture() = default;

double ChartPicture::scaleFor(QSize size)
{
    // Below 1 on small screens: a chart laid out narrower than its legend would cut it off.
    return std::clamp(std::min(size.width() / kDesignWidth, size.height() / kDesignHeight), 0.8, 3.0);
}

void ChartPicture::setChart(std::unique_ptr<QCustomPlot> plot)
{
    m_plot = std::move(plot);
    m_message.clear();
    if (m_plot)
        m_plot->setPalette(ownPalette()); // the charts restyle on their palette change
    redraw();
}

void ChartPicture::setMessage(const QString &message)
{
    m_plot.reset();
    m_message = message;
    redraw();
}

QPalette ChartPicture::ownPalette() const
{
    // An inherited palette resolves nothing: set on the parentless plot as it is, it would fall
    // back to the application's (light) colours. Every role is taken from this widget.
    QPalette colours = palette();
    colours.setResolveMask(~QPalette::ResolveMask(0));
    return colours;
}

void ChartPicture::redraw()
{
    m_picture = QPixmap();
    if (m_plot && width() > 0 && height() > 0) {
        const double scale = scaleFor(size());
        const QSize layout(static_cast<int>(std::lround(width() / scale)), static_cast<int>(std::lround(height() / scale)));
        // As meshplan-cli render: laid out (labels placed) at the layout size, then drawn larger.
        m_plot->resize(layout);
        m_plot->replot();
        const double dpr = devicePixelRatioF();
        m_picture = m_plot->toPixmap(layout.width(), layout.height(), scale * dpr);
        m_picture.setDevicePixelRatio(dpr);
    }
    update();
}

void ChartPicture::paintEvent(QPaintEvent *)
{
    QPainter painter(this);
    painter.fillRect(rect(), palette().color(QPalette::Base));
    if (!m_picture.isNull()) {
        painter.setRenderHint(QPainter::SmoothPixmapTransform);
        painter.drawPixmap(rect(), m_picture);
        return;
    }
    if (m_message.isEmpty())
        return;
    QFont f = font();
    f.setPixelSize(std::max(14, height() / 16));
    painter.setFont(f);
    painter.setPen(palette().color(QPalette::Text));
    painter.drawText(rect().adjusted(24, 24, -24, -24), Qt::AlignCenter | Qt::TextWordWrap, m_message);
}

void ChartPicture::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    redraw();
}

void ChartPicture::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange && m_plot) {
        m_plot->setPalette(ownPalette());
        redraw();
    }
}

} // namespace meshplan::views
