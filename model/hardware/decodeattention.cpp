// Decode attention curves: reading them and reading a share off them.
#include "hardware/decodeattention.h"
#include "hardware/curvepoints.h"
#include "base/jsonfields.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace meshplan::model {

namespace jf = json_fields;
using nlohmann::json;

namespace {

const CurveLimits kKilobytes{"kilobytes", 1e-3, 1e9, 1.0};

// Reads one curve many times over. share() blends up to kBatchedFrom reads at growing sizes,
// which land in a few of a curve's segments, so each segment's logs (and, for the single-request
// curve, its held end times) are worked out on the first read that lands in it. The arithmetic is
// a one-off read's, so every share comes out the same to the bit; a serving evaluation makes a
// few dozen of these reads, which were a third of its time.
class CurveReader {
public:
    /// The batched curve; or, with `ratio` (the chip's bandwidth over the measured one), the
    /// single-request curve, whose segments also keep their held times.
    explicit CurveReader(const CurvePoints &points) : m_points(points) {}
    CurveReader(const CurvePoints &points, double ratio) : m_points(points), m_ratio(ratio), m_single(true) {}

    // Between the points as measured (logInterpolate); below the smallest the call takes that
    // point's time: a kernel does not get faster than its floor, so the share falls in proportion
    // to the bytes. Past the largest the share stays.
    double batched(double kb)
    {
        const CurvePoints &p = m_points;
        if (p.empty())
            return 0.0;
        if (kb > 0 && kb < p.front().first)
            return p.front().second * kb / p.front().first;
        if (!(kb > p.front().first))
            return p.front().second;
        if (kb >= p.back().first)
            return p.back().second;
        const std::size_t i = segmentEnd(p, kb);
        return logInterpolateInSegment(p, i, kb, segment(i).logWidth);
    }

    // One request: the time is interpolated log-log between the measured points' times, each
    // held to no more than any larger read's. The figure's shares rise faster than the bytes
    // between some points (H100: 0.07 at 4,194 kB, 0.15 at 8,389 kB), and a share interpolated
    // as is sags between them, either way making a longer context decode faster; a call reading
    // more takes no less. Past the largest point the share stays; below the smallest the call
    // takes the floor's time. On a chip of `ratio` times the measured bandwidth a point's time is
    // its bytes at the top share plus the time the measured call lost to filling the chip, which
    // does not scale; the hold is taken on those times. Times are in kB per unit share of the
    // chip's own bandwidth.
    double single(double kb)
    {
        const CurvePoints &p = m_points;
        if (p.empty())
            return 0.0;
        if (!(kb > 0) || kb >= p.back().first)
            return kb >= p.back().first ? p.back().second : p.front().second;
        if (kb <= p.front().first)
            return kb / heldTime(0);
        const std::size_t i = segmentEnd(p, kb);
        const Segment &s = segment(i);
        const double f = std::log(kb / p[i - 1].first) / s.logWidth;
        return kb / std::exp(s.logT0 + f * s.logRise);
    }

private:
    struct Segment {
        double logWidth; ///< log of the segment's width in kB
        double logT0;    ///< single curve: log of the held time at its start
        double logRise;  ///< single curve: log of the held time at its end over that at its start
    };
    static constexpr std::size_t kCachedSegments = 32;

    double pointTime(std::size_t j) const
    {
        const double top = m_points.back().second;
        const auto &[x, share] = m_points[j];
        return x / top + m_ratio * std::max(0.0, x / share - x / top);
    }

    double heldTime(std::size_t from) const
    {
        double t = std::numeric_limits<double>::infinity();
        for (std::size_t j = from; j < m_points.size(); ++j)
            t = std::min(t, pointTime(j));
        return t;
    }

    // The segment from point i - 1 to point i (0 < i < size).
    const Segment &segment(std::size_t i)
    {
        const bool cached = i < kCachedSegments;
        Segment &s = cached ? m_segments[i] : m_spare;
        if (cached && m_known[i])
            return s;
        s.logWidth = std::log(m_points[i].first / m_points[i - 1].first);
        if (m_single) {
            const double t1 = heldTime(i);
            const double t0 = std::min(pointTime(i - 1), t1);
            s.logT0 = std::log(t0);
            s.logRise = std::log(t1 / t0);
        }
        if (cached)
            m_known[i] = true;
        return s;
    }

    const CurvePoints &m_points;
    double m_ratio = 0;
    bool m_single = false;
    std::array<bool, kCachedSegments> m_known{};
    std::array<Segment, kCachedSegments> m_segments; // each read only once m_known says so
    Segment m_spare;
};

// The share at `kb` per call over `sequences` sequences, before share()'s cap over larger counts.
double blendedShare(CurveReader &batched, CurveReader &single, double kb, double sequences)
{
    const double many = batched.batched(kb);
    if (sequences >= DecodeAttentionCurve::kBatchedFrom)
        return many;
    const double one = single.single(kb);
    if (!(sequences > 1.0))
        return one;
    return one + std::log(sequences) / std::log(DecodeAttentionCurve::kBatchedFrom) * (many - one);
}

} // namespace

double DecodeAttentionCurve::share(double bytes, double sequences, double bandwidth) const
{
    if (batched.empty() || single.empty())
        return 1.0; // no curve: nothing is lost to filling the chip
    // A single request's call is bound by filling the chip, not by its bandwidth: read so, the
    // H100 panel gives A100's single-request points within 0.055 (rms 0.027), against 0.10 (rms
    // 0.062) with the shares carried over. The batched calls scale with the bandwidth (shares
    // carried over: within 0.05, rms 0.027) and are left as read.
    const bool scaled = measuredBandwidth > 0 && bandwidth > 0 && bandwidth != measuredBandwidth;
    CurveReader many(batched);
    CurveReader one(single, scaled ? bandwidth / measuredBandwidth : 1.0);
    double best = blendedShare(many, one, bytes / 1e3, sequences);
    if (!(sequences > 1.0) || sequences >= kBatchedFrom || !(bytes > 0))
        return best;
    // More sequences at the same context read more and take no less: the blend with the slower
    // single-request kernel, read below the batched curve's floor, would otherwise make 8
    // sequences decode slower than 16 (or 4 than 6). So a batched call takes no longer than any
    // larger whole count up to kBatchedFrom takes at the same context. One request runs another
    // kernel (split over the cache to fill the chip), measured as it is.
    for (double more = std::floor(sequences) + 1.0; more <= kBatchedFrom; more += 1.0) {
        const double fuller = bytes * more / sequences;
        best = std::max(best, blendedShare(many, one, fuller / 1e3, more) * bytes / fuller);
    }
    return best;
}

DecodeAttentionCurve decodeAttentionCurveFromJson(const json &object, const std::string &path)
{
    if (!object.is_object())
        throw FieldError(path, "must be an object with batched and single curves");
    DecodeAttentionCurve curve;
    curve.batched = readCurvePoints(object, "batched", path, kKilobytes);
    curve.single = readCurvePoints(object, "single", path, kKilobytes);
    if (jf::has(object, "measured_bandwidth"))
        curve.measuredBandwidth = jf::positiveNumber(object, "measured_bandwidth", path);
    curve.source = jf::stringOr(object, "source", path, "");
    return curve;
}

json decodeAttentionCurveToJson(const DecodeAttentionCurve &curve)
{
    json o = {{"batched", writeCurvePoints(curve.batched)}, {"single", writeCurvePoints(curve.single)}};
    if (curve.measuredBandwidth > 0)
        o["measured_bandwidth"] = curve.measuredBandwidth;
    if (!curve.source.empty())
        o["source"] = curve.source;
    return o;
}

} // namespace meshplan::model
