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

using nlohmann::json;
using namespace meshplan::model;

class TestAttentionKernel : public QObject
{
    Q_OBJECT

private slots:
    // Forward points are the curve's own (shares to three digits: within 0.5%); a forward+backward
    // point is 3.5 forward FLOPs over the time of both passes, 3.5 / (1/R_fwd + 2.5/R_bwd), which
    // checks the backward curve derived from it (within 1%).
    void curvesReproduceTheBenchmarks_data()
    {
        QTest::addColumn<QString>("chip");
        QTest::addColumn<QString>("kernel");
        QTest::addColumn<QString>("pass");
        QTest::addColumn<double>("seqLen");
        QTest::addColumn<double>("tflops");
        const json data = readData();
        QCOMPARE(data["attention"].size(), std::size_t(30));
        for (const json &point : data["attention"]) {
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
        const double forward = peak * found->second.forwardShare(seqLen);
        const double backward = peak * found->second.backwardShare(seqLen);
        if (pass == QLatin1String("forward")) {
            QVERIFY2(std::fabs(forward / tflops - 1.0) < 0.005, qPrintable(QString::number(forward)));
        } else {
            const double both = 3.5 / (1.0 / forward + 2.5 / backward);
            QVERIFY2(std::fabs(both / tflops - 1.0) < 0.01, qPrintable(QString::number(both)));
        }
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
            if (!bf16 && c->achievable.eightBitMatmulBenchmarkFraction <= 0)
                continue; // Blackwell keeps its end-to-end fp8 figure
            const double fraction = bf16 ? c->achievable.matmulBenchmarkFraction
                                         : c->achievable.eightBitMatmulBenchmarkFraction;
            const double peak = c->peakFlops(bf16 ? DType::Bf16 : DType::Fp8) / 1e12;
            QVERIFY2(std::fabs(fraction * peak / row["tflops"].get<double>() - 1.0) < 0.002, id.c_str());
            ++checked;
        }
        QCOMPARE(checked, 6);
    }

    // Log-linear between measured lengths: H100 FlashAttention-2 forward at T = 3000 lies
    // ln(3000/2048)/ln 2 = 0.5508 of the way from 0.301 (2k) to 0.323 (4k): 0.31312. Flat outside.
    void interpolatesInLogLength()
    {
        const auto &curve = ChipCatalog::builtin().find("h100-sxm")->attentionKernels.at("flash-attention-2");
        QVERIFY(std::fabs(curve.forwardShare(3000) - (0.301 + std::log(3000.0 / 2048.0) / std::log(2.0) * 0.022)) < 1e-12);
        QVERIFY(std::fabs(curve.forwardShare(3000) - 0.31312) < 1e-5);
        QCOMPARE(curve.forwardShare(4096), 0.323);
        QCOMPARE(curve.forwardShare(128), 0.193);
        QCOMPARE(curve.forwardShare(262144), 0.339);
        QCOMPARE(curve.backwardShare(131072), 0.329);
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
