// Attention kernel curves: the catalog's curves reproduce the published kernel benchmarks they were
// read from (tests/data/kernel-benchmarks, with sources), and a curve is read and interpolated as
// its header says.
#include "base/jsonfields.h"
#include "hardware/attentionkernel.h"
#include "hardware/chipcatalog.h"

#include <QFile>
#include <QTest>

#include <nlohmann/json.hpp>

#include <cmath>
#include <map>
#include <numeric>
#include <tuple>
#include <vector>

using nlohmann::json;
using namespace meshplan::model;

class TestAttentionKernel : public QObject
{
    Q_OBJECT

private slots:
    // Forward and backward points are the curve's own (shares to three digits: within 0.5%); a
    // forward+backward point is 3.5 forward FLOPs over the time of both passes, 3.5 / (1/R_fwd + 2.5/R_bwd), which
    // checks the backward curve derived from it (within 1%).
    void curvesReproduceTheBenchmarks_data()
    {
        QTest::addColumn<QString>("chip");
        QTest::addColumn<QString>("kernel");
        QTest::addColumn<QString>("pass");
        QTest::addColumn<double>("seqLen");
        QTest::addColumn<double>("tflops");
        const json data = readData();
        QCOMPARE(data["attention"].size(), std::size_t(146));
        for (const json &point : data["attention"]) {
            if (point["head_dim"] != 128)
                continue; // the head-dim ratios, checked below
            const std::string name = point["chip"].get<std::string>() + " " + point["kernel"].get<std::string>() + " "
                                     + point["pass"].get<std::string>() + " "
                                     + std::to_string(point["seq_len"].get<int>());
            QTest::newRow(name.c_str()) << QString::fromStdString(point["chip"].get<std::string>())
                                        << QString::fromStdString(point["kernel"].get<std::string>())
                                        << QString::fromStdString(point["pass"].get<std::string>())
                                        << point["seq_len"].get<double>() << point["tflops"].get<double>();
        }
    }
    void curvesReproduceTheBenchmarks()
    {
        QFETCH(QString, chip);
        QFETCH(QString, kernel);
        QFETCH(QString, pass);
        QFETCH(double, seqLen);
        QFETCH(double, tflops);
        const Chip *c = ChipCatalog::builtin().find(chip.toStdString());
        QVERIFY(c);
        const auto found = c->attentionKernels.find(kernel.toStdString());
        QVERIFY(found != c->attentionKernels.end());
        const double peak = c->peakFlops(DType::Bf16) / 1e12;
        const double forward = peak * found->second.forwardShare(seqLen, 128);
        const double backward = peak * found->second.backwardShare(seqLen, 128);
        if (pass == QLatin1String("forward")) {
            QVERIFY2(std::fabs(forward / tflops - 1.0) < 0.005, qPrintable(QString::number(forward)));
        } else if (pass == QLatin1String("backward")) {
            QVERIFY2(std::fabs(backward / tflops - 1.0) < 0.005, qPrintable(QString::number(backward)));
        } else {
            const double both = 3.5 / (1.0 / forward + 2.5 / backward);
            QVERIFY2(std::fabs(both / tflops - 1.0) < 0.01, qPrintable(QString::number(both)));
        }
    }

    // A kernel's head-dim ratio is the mean, over 2k-16k tokens, of its measured TFLOP/s at that
    // head dim over head dim 128's at the same length. Forward points check the forward ratio
    // (within 0.5%: ratios to three digits); forward+backward points check both passes together,
    // 3.5 / (1/R_fwd + 2.5/R_bwd) at each head dim (within 1%).
    void headDimRatiosReproduceTheBenchmarks()
    {
        const json data = readData();
        std::map<std::tuple<std::string, std::string, std::string, int>, double> at128;
        for (const json &p : data["attention"])
            if (p["head_dim"] == 128)
                at128[{p["chip"], p["kernel"], p["pass"], p["seq_len"]}] = p["tflops"];
        std::map<std::tuple<std::string, std::string, std::string, int>, std::vector<double>> ratios;
        for (const json &p : data["attention"]) {
            const int t = p["seq_len"];
            if (p["head_dim"] == 128 || t < 2048)
                continue;
            const auto base = at128.find({p["chip"], p["kernel"], p["pass"], t});
            QVERIFY(base != at128.end());
            ratios[{p["chip"], p["kernel"], p["pass"], p["head_dim"]}].push_back(p["tflops"].get<double>() / base->second);
        }
        QCOMPARE(ratios.size(), std::size_t(8));
        for (const auto &[key, list] : ratios) {
            const auto &[chip, kernel, pass, headDim] = key;
            QCOMPARE(list.size(), std::size_t(4));
            const double measured = std::accumulate(list.begin(), list.end(), 0.0) / double(list.size());
            const auto &curve = ChipCatalog::builtin().find(chip)->attentionKernels.at(kernel);
            const std::string name = chip + " " + kernel + " " + pass + " " + std::to_string(headDim);
            if (pass == "forward") {
                QVERIFY2(std::fabs(curve.headDims.factor(headDim, false) / measured - 1.0) < 0.005, name.c_str());
                continue;
            }
            double predicted = 0;
            for (double t : {2048.0, 4096.0, 8192.0, 16384.0}) {
                const auto both = [&](double d) {
                    return 3.5 / (1.0 / curve.forwardShare(t, d) + 2.5 / curve.backwardShare(t, d));
                };
                predicted += both(headDim) / both(128) / 4.0;
            }
            QVERIFY2(std::fabs(predicted / measured - 1.0) < 0.01, (name + " " + std::to_string(predicted)).c_str());
        }
    }

    // A head dim between compiled kernels pads up to the next one and computes on zeros:
    // FlashAttention-2 on H100 at head dim 80 runs the 96 kernel, whose rate lies
    // log2(96/64) = 0.585 of the way from 0.887 (64) to 1 (128): 0.9531, of which 80/96 is
    // useful: 0.7943. 112 runs the 128 kernel: 0.875. cuDNN pads nothing: 80 lies
    // log2(80/64) = 0.3219 of the way from 0.707 to 1: 0.8013. FlashAttention-3 at MLA's 192:
    // 1 + 0.585 * 0.043 = 1.0252. Past the largest measured head dim the rate stays flat.
    void headDimPadsToTheCompiledKernel()
    {
        const Chip &h100 = *ChipCatalog::builtin().find("h100-sxm");
        const auto &fa2 = h100.attentionKernels.at("flash-attention-2").headDims;
        QCOMPARE(fa2.paddedHeadDim(80), 96.0);
        QCOMPARE(fa2.paddedHeadDim(128), 128.0);
        QCOMPARE(fa2.paddedHeadDim(160), 192.0);
        QVERIFY(std::fabs(fa2.factor(80, false) - 0.7943) < 1e-4);
        QVERIFY(std::fabs(fa2.factor(112, false) - 0.875) < 1e-12);
        QVERIFY(std::fabs(fa2.factor(112, true) - 0.875) < 1e-12);
        QCOMPARE(fa2.factor(128, false), 1.0);
        QCOMPARE(fa2.factor(64, true), 0.871);
        QVERIFY(std::fabs(h100.attentionKernels.at("cudnn").headDims.factor(80, true) - 0.8013) < 1e-4);
        QVERIFY(std::fabs(h100.attentionKernels.at("flash-attention-3").headDims.factor(192, false) - 1.0252) < 1e-4);
        // A100 publishes no head dim above 128: 256 runs as 128 does.
        const auto &a100 = ChipCatalog::builtin().find("a100-80gb")->attentionKernels.at("flash-attention-2").headDims;
        QCOMPARE(a100.factor(256, false), 1.0);
        QCOMPARE(a100.factor(64, true), 0.9);
        // The share is the length curve's times the head-dim factor.
        const auto &curve = h100.attentionKernels.at("flash-attention-2");
        QVERIFY(std::fabs(curve.forwardShare(4096, 80) - 0.323 * fa2.factor(80, false)) < 1e-12);
    }

    // The matmul benchmark fractions are the MAMF table's TFLOP/s over the datasheet peak.
    void matmulBenchmarkFractions()
    {
        const auto &catalog = ChipCatalog::builtin();
        const json data = readData();
        int checked = 0;
        for (const json &row : data["matmul_benchmark"]) {
            std::string id = row["chip"].get<std::string>();
            if (id == "a100-sxm")
                id = "a100-80gb";
            else if (id == "h200-sxm")
                id = "h200";
            else if (id == "b200-sxm")
                id = "b200";
            const Chip *c = catalog.find(id);
            QVERIFY2(c, id.c_str());
            const bool bf16 = row["dtype"] == "bf16";
            QVERIFY2(bf16 || c->achievable.eightBitMatmulBenchmarkFraction > 0, id.c_str());
            const double fraction = bf16 ? c->achievable.matmulBenchmarkFraction
                                         : c->achievable.eightBitMatmulBenchmarkFraction;
            const double peak = c->peakFlops(bf16 ? DType::Bf16 : DType::Fp8) / 1e12;
            QVERIFY2(std::fabs(fraction * peak / row["tflops"].get<double>() - 1.0) < 0.002, id.c_str());
            ++checked;
        }
        QCOMPARE(checked, 8); // bf16 and fp8 on H100, H200, B200 and GB200
    }

    // Log-linear between measured lengths: H100 FlashAttention-2 forward at T = 3000 lies
    // ln(3000/2048)/ln 2 = 0.5508 of the way from 0.301 (2k) to 0.323 (4k): 0.31312. Flat outside.
    void interpolatesInLogLength()
    {
        const auto &curve = ChipCatalog::builtin().find("h100-sxm")->attentionKernels.at("flash-attention-2");
        QVERIFY(std::fabs(curve.forwardShare(3000, 128) - (0.301 + std::log(3000.0 / 2048.0) / std::log(2.0) * 0.022)) < 1e-12);
        QVERIFY(std::fabs(curve.forwardShare(3000, 128) - 0.31312) < 1e-5);
        QCOMPARE(curve.forwardShare(4096, 128), 0.323);
        QCOMPARE(curve.forwardShare(128, 128), 0.193);
        QCOMPARE(curve.forwardShare(262144, 128), 0.339);
        QCOMPARE(curve.backwardShare(131072, 128), 0.329);
    }

    void refusesBadCurves_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("path");
        QTest::newRow("empty") << R"({"forward": [], "backward": [[512, 0.2]]})" << "k.forward";
        QTest::newRow("unsorted") << R"({"forward": [[1024, 0.3], [512, 0.2]], "backward": [[512, 0.2]]})"
                                  << "k.forward[1]";
        QTest::newRow("share above one") << R"({"forward": [[512, 1.2]], "backward": [[512, 0.2]]})"
                                         << "k.forward[0]";
        QTest::newRow("not a pair") << R"({"forward": [[512]], "backward": [[512, 0.2]]})" << "k.forward[0]";
        QTest::newRow("no backward") << R"({"forward": [[512, 0.2]]})" << "k.backward";
        QTest::newRow("head dims unsorted")
            << R"({"forward": [[512, 0.2]], "backward": [[512, 0.2]], "head_dims": {"compiled": [64, 32], "forward": [[64, 0.9]]}})"
            << "k.head_dims.compiled";
        QTest::newRow("head-dim ratio above two")
            << R"({"forward": [[512, 0.2]], "backward": [[512, 0.2]], "head_dims": {"forward": [[64, 2.5]]}})"
            << "k.head_dims.forward[0]";
        QTest::newRow("head dims not an object")
            << R"({"forward": [[512, 0.2]], "backward": [[512, 0.2]], "head_dims": [64]})" << "k.head_dims";
    }
    void refusesBadCurves()
    {
        QFETCH(QString, text);
        QFETCH(QString, path);
        try {
            attentionKernelCurveFromJson(json::parse(text.toStdString()), "k");
            QFAIL("accepted");
        } catch (const FieldError &e) {
            QCOMPARE(QString::fromStdString(e.error.path), path);
        }
    }

    void roundTrips()
    {
        const Chip &h100 = *ChipCatalog::builtin().find("h100-sxm");
        const auto &curve = h100.attentionKernels.at("cudnn");
        const AttentionKernelCurve again = attentionKernelCurveFromJson(attentionKernelCurveToJson(curve), "k");
        QCOMPARE(again.forward, curve.forward);
        QCOMPARE(again.backward, curve.backward);
        QCOMPARE(again.source, curve.source);
        QCOMPARE(again.headDims.compiled, curve.headDims.compiled);
        QCOMPARE(again.headDims.forward, curve.headDims.forward);
        QCOMPARE(again.headDims.backward, curve.headDims.backward);
        QCOMPARE(again.headDims.source, curve.headDims.source);
        const auto &fa2 = h100.attentionKernels.at("flash-attention-2");
        const AttentionKernelCurve fa2Again = attentionKernelCurveFromJson(attentionKernelCurveToJson(fa2), "k");
        QCOMPARE(fa2Again.headDims.compiled, fa2.headDims.compiled);
        QCOMPARE(fa2Again.headDims.backward, fa2.headDims.backward);
    }

private:
    static json readData()
    {
        QFile f(QStringLiteral(MESHPLAN_TEST_DATA "/kernel-benchmarks/kernel-benchmarks.json"));
        if (!f.open(QIODevice::ReadOnly))
            qFatal("cannot read the kernel benchmarks");
        return json::parse(f.readAll().toStdString());
    }
};

QTEST_APPLESS_MAIN(TestAttentionKernel)
#include "tst_attentionkernel.moc"
