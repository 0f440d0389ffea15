// The built-in chip catalog and user-defined chips: every chip complete, bad fields named.
#include "hardware/chip.h"
#include "hardware/chipcatalog.h"
#include "hardware/roofline.h"
#include "hardware/topology.h"

#include <QFile>
#include <QTest>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

using nlohmann::json;
using namespace meshplan::model;

class TestChipCatalog : public QObject
{
    Q_OBJECT

private slots:
    void everyBookChipIsThere()
    {
        const auto &catalog = ChipCatalog::builtin();
        for (const char *id : {"tpu-v3", "tpu-v4", "tpu-v5e", "tpu-v5p", "tpu-v6e", "tpu7x", "a100-80gb", "h100-sxm",
                               "h800", "h200", "b200", "gb200"})
            QVERIFY2(catalog.find(id), id);
        QCOMPARE(catalog.chips().size(), std::size_t(12));
    }

    void everyChipIsComplete()
    {
        for (const auto &chip : ChipCatalog::builtin().chips()) {
            const QByteArray id = QByteArray::fromStdString(chip.id);
            QVERIFY2(chip.listedPeakFlops(DType::Bf16) > 1e13, id);
            QVERIFY2(chip.hbmBytes > (std::int64_t(8) << 30), id);
            QVERIFY2(chip.hbmBandwidth > 5e11, id);
            QVERIFY2(chip.pricePerHour > 0, id);
            QVERIFY2(!chip.sources.empty(), id);
            QVERIFY2(chip.achievable.flopsFraction > 0.5 && chip.achievable.flopsFraction <= 1.0, id);
            if (chip.isTpu()) {
                QVERIFY2(chip.ici && chip.ici->linkBandwidth > 1e10 && chip.dcnBandwidth > 1e9, id);
            } else {
                QVERIFY2(chip.nvlink && chip.scaleOut, id);
                QVERIFY2(chip.nvlink->bandwidth > chip.scaleOut->nodeEgressBandwidth / chip.nvlink->domainSize, id);
            }
            // Round trip: what we write, we read back identically.
            const auto again = chipFromJson(chipToJson(chip), "chip");
            QVERIFY2(again.hasValue(), id);
            QCOMPARE(again->peakFlopsByDType, chip.peakFlopsByDType);
            QCOMPARE(again->hbmBytes, chip.hbmBytes);
            QCOMPARE(again->achievable.legacyKernelShare, chip.achievable.legacyKernelShare);
            QCOMPARE(bool(again->decodeAttention), bool(chip.decodeAttention));
            if (chip.decodeAttention) {
                QCOMPARE(again->decodeAttention->batched, chip.decodeAttention->batched);
                QCOMPARE(again->decodeAttention->single, chip.decodeAttention->single);
                QCOMPARE(again->decodeAttention->measuredBandwidth, chip.decodeAttention->measuredBandwidth);
            }
        }
    }

    // Book ch. 1/12: the HBM critical batch sizes (FLOPs per byte of the hardware).
    void criticalBatchSizes_data()
    {
        QTest::addColumn<QString>("chip");
        QTest::addColumn<QString>("dtype");
        QTest::addColumn<double>("expected");
        QTest::newRow("v5e bf16 (book 240)") << "tpu-v5e" << "bf16" << 1.97e14 / 8.2e11;
        QTest::newRow("v5e int8 OPs (book 480 = 2 x 240)") << "tpu-v5e" << "int8" << 3.94e14 / 8.2e11;
        QTest::newRow("H100 bf16 (book 295)") << "h100-sxm" << "bf16" << 9.89e14 / 3.35e12;
        QTest::newRow("H100 fp8 (book 590)") << "h100-sxm" << "fp8" << 1.979e15 / 3.35e12;
        QTest::newRow("B200 bf16 (book 281)") << "b200" << "bf16" << 2.25e15 / 8e12;
        QTest::newRow("B200 fp8 (book 562)") << "b200" << "fp8" << 4.5e15 / 8e12;
    }
    void criticalBatchSizes()
    {
        QFETCH(QString, chip);
        QFETCH(QString, dtype);
        QFETCH(double, expected);
        const Chip *c = ChipCatalog::builtin().find(chip.toStdString());
        QVERIFY(c);
        const double got = roofline(1, 1, c->peakFlops(*parseDType(dtype.toStdString())), c->hbmBandwidth).criticalIntensity;
        QVERIFY2(std::fabs(got / expected - 1) < 1e-9, qPrintable(QString::number(got)));
    }

    // A matmul of reduction depth K runs at K / (K + K0) of the large-K rate, K0 = 137 on H100 in
    // bf16 (the per-tile prologue and epilogue). Checked against OpenXLA's H100 bf16 matmul table
    // (tests/data/kernel-benchmarks/gemm-shapes.json): in every slice of fixed M, N and batch with
    // at least 2^25 output elements in flight (training's matmuls have more), the throughput at K
    // relative to K = 4096 follows the model within 8% for K >= 512. Smaller slices and K = 256
    // also pay the table's fixed ~6 us per call, which the model does not charge, so they are left out.
    void matmulShapeEfficiencyFollowsTheBenchmark()
    {
        const Chip &h100 = *ChipCatalog::builtin().find("h100-sxm");
        QCOMPARE(h100.matmulShapeEfficiency(137.0, DType::Bf16), 0.5);
        QCOMPARE(h100.matmulShapeEfficiency(137.0 * 1979.0 / 989.0, DType::Fp8), 0.5); // the same time per tile, twice the rate
        QCOMPARE(ChipCatalog::builtin().find("tpu-v5p")->matmulShapeEfficiency(512.0, DType::Bf16), 1.0);

        QFile file(QStringLiteral(MESHPLAN_TEST_DATA "/kernel-benchmarks/gemm-shapes.json"));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const json data = json::parse(file.readAll().toStdString());
        std::map<std::tuple<double, double, double>, std::map<double, double>> slices;
        for (const json &p : data["points"])
            if (p["source"] == "xla-ptable-sm90" && p["dtype"] == "bf16")
                slices[{p["m"].get<double>(), p["n"].get<double>(), p.value("batch", 1.0)}][p["k"].get<double>()] =
                    p["tflops"].get<double>();
        int checked = 0;
        for (const auto &[shape, byK] : slices) {
            const auto [m, n, batch] = shape;
            if (m * n * batch < std::pow(2.0, 25) || !byK.count(4096.0))
                continue;
            for (const auto &[k, tflops] : byK) {
                if (k < 512 || k == 4096)
                    continue;
                const double measured = tflops / byK.at(4096.0);
                const double model = h100.matmulShapeEfficiency(k, DType::Bf16) / h100.matmulShapeEfficiency(4096.0, DType::Bf16);
                QVERIFY2(std::fabs(model / measured - 1.0) < 0.08,
                         qPrintable(QStringLiteral("M %1 N %2 batch %3 K %4: measured %5, model %6")
                                        .arg(m).arg(n).arg(batch).arg(k).arg(measured).arg(model)));
                ++checked;
            }
        }
        QVERIFY(checked >= 10);
    }

    void peakFallsBackToAWiderFormat()
    {
        const Chip &v5e = *ChipCatalog::builtin().find("tpu-v5e");
        QCOMPARE(v5e.peakFlops(DType::Fp8), 1.97e14);  // no fp8 units: runs as bf16
        QCOMPARE(v5e.peakFlops(DType::Int4), 3.94e14); // int4 weights run on the int8 path
        QCOMPARE(v5e.peakFlops(DType::Fp32), 1.97e14 / 4);
    }

    // An 8-bit matmul keeps the share of its benchmark rate that a 16-bit one keeps inside a step
    // (MAMF, stas00/ml-engineering: H100 fp8 1402.6 of 1979 TFLOP/s = 0.709, bf16 794.5 of 989 =
    // 0.803): 0.709 x 0.5729 / 0.803 = 0.506. A type the chip runs as bf16, or a chip with no 8-bit
    // figure, uses the ordinary fraction; an explicit fp8_flops_fraction still applies alone.
    void eightBitAchievableFraction()
    {
        const auto &catalog = ChipCatalog::builtin();
        const Chip &h100 = *catalog.find("h100-sxm");
        QCOMPARE(h100.achievableFlopsFraction(DType::Bf16), 0.5729);
        QVERIFY(std::fabs(h100.achievableFlopsFraction(DType::Fp8) - 0.709 * 0.5729 / 0.803) < 1e-12);
        QVERIFY(std::fabs(h100.achievableFlopsFraction(DType::Int8) - 0.5059) < 1e-4);
        // 0.506 x 1979 TFLOP/s = 1001 against 0.5729 x 989 = 567 in bf16: an fp8 matmul runs 1.77x faster.
        QVERIFY(std::fabs(h100.peakFlops(DType::Fp8) * h100.achievableFlopsFraction(DType::Fp8)
                          / (h100.peakFlops(DType::Bf16) * h100.achievableFlopsFraction(DType::Bf16)) - 1.7676) < 1e-3);
        // H200 has H100's SMs and clocks: the same bf16 matmul rate (MAMF), its own fp8 one (1453.4).
        const Chip &h200 = *catalog.find("h200");
        QCOMPARE(h200.achievableFlopsFraction(DType::Bf16), h100.achievableFlopsFraction(DType::Bf16));
        QCOMPARE(h200.achievable.matmulBenchmarkFraction, h100.achievable.matmulBenchmarkFraction);
        QVERIFY(std::fabs(h200.achievableFlopsFraction(DType::Fp8) - 0.734 * 0.5729 / 0.803) < 1e-12);
        const Chip &a100 = *catalog.find("a100-80gb");
        QCOMPARE(a100.achievableFlopsFraction(DType::Fp8), 0.62); // no fp8 units: bf16 at the bf16 fraction
        const Chip &v5e = *catalog.find("tpu-v5e");
        QCOMPARE(v5e.achievableFlopsFraction(DType::Int8), 0.8);  // no separate figure
        const json round = chipToJson(h100);
        QCOMPARE(round["achievable"]["fp8_matmul_benchmark_fraction"].get<double>(), 0.709);
        QCOMPARE(round["achievable"]["matmul_benchmark_fraction"].get<double>(), 0.803);
        QVERIFY(!chipToJson(v5e)["achievable"].contains("fp8_matmul_benchmark_fraction"));
        Chip own = h100;
        own.achievable.eightBitMatmulBenchmarkFraction = 0;
        own.achievable.eightBitFlopsFraction = 0.44;
        QCOMPARE(own.achievableFlopsFraction(DType::Fp8), 0.44);
    }

    // One benchmark-to-step share for every GPU: the A100 calibration runs set A100's
    // flops_fraction (0.62), 0.713 of its maximum achievable matmul rate (271.2 of 312 TFLOP/s);
    // every other GPU's flops_fraction is that share of its own MAMF, not a number of its own.
    // Rounded down to four places in the catalog, so every GPU's note shows the same 0.713.
    void everyGpuKeepsTheSameShareOfItsBenchmarkRate()
    {
        const auto &catalog = ChipCatalog::builtin();
        const Chip &a100 = *catalog.find("a100-80gb");
        QCOMPARE(a100.achievable.flopsFraction, 0.62);
        QCOMPARE(a100.achievable.matmulBenchmarkFraction, 0.869);
        const double share = 0.62 / 0.869;
        int gpus = 0;
        for (const Chip &chip : catalog.chips()) {
            if (chip.isTpu())
                continue;
            ++gpus;
            QVERIFY2(chip.achievable.matmulBenchmarkFraction > 0, chip.id.c_str());
            const double derived = share * chip.achievable.matmulBenchmarkFraction;
            QVERIFY2(std::fabs(chip.achievable.flopsFraction - derived) < 5e-4,
                     qPrintable(QStringLiteral("%1: %2, derived %3")
                                    .arg(QString::fromStdString(chip.id))
                                    .arg(chip.achievable.flopsFraction)
                                    .arg(derived)));
        }
        QCOMPARE(gpus, 6); // A100, H100, H800, H200, B200, GB200
        // Hand-derived: H100 0.7135 x 0.803 = 0.5729, B200 x 0.776 = 0.5536, GB200 x 0.729 = 0.5201.
        QCOMPARE(catalog.find("h100-sxm")->achievable.flopsFraction, 0.5729);
        QCOMPARE(catalog.find("b200")->achievable.flopsFraction, 0.5536);
        QCOMPARE(catalog.find("gb200")->achievable.flopsFraction, 0.5201);
        // The derivations say so with the numbers: benchmark share x the share a step keeps.
        const Chip &h100 = *catalog.find("h100-sxm");
        const QString bf16 = QString::fromStdString(h100.achievableFlopsFractionNote(DType::Bf16));
        QVERIFY2(bf16.contains(QStringLiteral("matmul_benchmark_fraction 0.803")) && bf16.contains(QStringLiteral("x 0.713")),
                 qPrintable(bf16));
        const QString fp8 = QString::fromStdString(h100.achievableFlopsFractionNote(DType::Fp8));
        QVERIFY2(fp8.contains(QStringLiteral("fp8_matmul_benchmark_fraction 0.709")), qPrintable(fp8));
        const QString tpu = QString::fromStdString(catalog.find("tpu-v5p")->achievableFlopsFractionNote(DType::Bf16));
        QVERIFY2(tpu.contains(QStringLiteral("whole training steps")) && !tpu.contains(QStringLiteral("benchmark")),
                 qPrintable(tpu));
        // Not only GPUs: TPU7x has no calibration run but a published bf16 GEMM benchmark
        // (956.4 TFLOP/s a TensorCore at m = n = k = 32768, two a chip: 1912.8 of 2307 = 0.829),
        // so it keeps the GPUs' share of it, 0.7135 x 0.829 = 0.5915.
        const Chip &ironwood = *catalog.find("tpu7x");
        QCOMPARE(ironwood.achievable.matmulBenchmarkFraction, 0.829);
        QVERIFY(std::fabs(2 * 956.3824592e12 / ironwood.peakFlops(DType::Bf16) - 0.829) < 5e-4);
        QVERIFY(std::fabs(ironwood.achievable.flopsFraction - share * 0.829) < 5e-4);
        // Its HBM copy (bytes read and written) at 512 MiB to 8 GiB: 3,198-3,210 GB/s a core.
        QVERIFY(std::fabs(2 * 3.1979e12 / ironwood.hbmBandwidth - ironwood.achievable.hbmEfficiency) < 0.003);
        QVERIFY(std::fabs(2 * 3.2105e12 / ironwood.hbmBandwidth - ironwood.achievable.hbmEfficiency) < 0.003);
        const QString ironwoodNote = QString::fromStdString(ironwood.achievableFlopsFractionNote(DType::Bf16));
        QVERIFY2(ironwoodNote.contains(QStringLiteral("matmul_benchmark_fraction 0.829"))
                     && ironwoodNote.contains(QStringLiteral("x 0.714")),
                 qPrintable(ironwoodNote));
    }

    // A kernel built for SM80 runs on Hopper as FlashAttention-2 does: its fwd+bwd rate over
    // A100's, from the two chips' FA2 curves (the combined pass as 3.5 / (1 / fwd + 2.5 / bwd)),
    // averaged at 2k-16k tokens, is 1.709; times A100's achievable matmul rate over this chip's
    // it is the catalog's legacy_kernel_share.
    void legacyKernelShareFollowsFlashAttention2()
    {
        const auto &catalog = ChipCatalog::builtin();
        const Chip &a100 = *catalog.find("a100-80gb");
        const auto &fa2A100 = a100.attentionKernels.at("flash-attention-2");
        for (const char *id : {"h100-sxm", "h200", "h800"}) {
            const Chip &hopper = *catalog.find(id);
            QVERIFY2(hopper.attentionKernels.count("flash-attention-2"), id);
            const auto &fa2 = hopper.attentionKernels.at("flash-attention-2");
            double ratio = 0;
            for (double t : {2048.0, 4096.0, 8192.0, 16384.0}) {
                const double peak = hopper.peakFlops(DType::Bf16);
                const double combined = 3.5 / (1.0 / (fa2.forwardShare(t, 128) * peak) + 2.5 / (fa2.backwardShare(t, 128) * peak));
                ratio += combined / (fa2A100.forwardShare(t, 128) * a100.peakFlops(DType::Bf16)) / 4.0;
            }
            QVERIFY2(std::fabs(ratio - 1.709) < 0.005, qPrintable(QString::number(ratio)));
            const double share = ratio * a100.peakFlops(DType::Bf16) * a100.achievable.flopsFraction
                                 / (hopper.peakFlops(DType::Bf16) * hopper.achievable.flopsFraction);
            QVERIFY2(std::fabs(share - hopper.achievable.legacyKernelShare) < 0.002, id);
            QCOMPARE(chipToJson(hopper)["achievable"]["legacy_kernel_share"].get<double>(), 0.583);
        }
        // Chips that run their own generation's kernels list none.
        for (const char *id : {"a100-80gb", "b200", "tpu-v5e"})
            QCOMPARE(catalog.find(id)->achievable.legacyKernelShare, 0.0);
        QVERIFY(!chipToJson(a100)["achievable"].contains("legacy_kernel_share"));
    }

    void wraparoundRules_data()
    {
        QTest::addColumn<QString>("chip");
        QTest::addColumn<QString>("shape");
        QTest::addColumn<QString>("wraps");
        QTest::newRow("v5p 4x4x4 cube wraps all") << "tpu-v5p" << "4x4x4" << "111";
        QTest::newRow("v5p 2x2x4 below a cube: none") << "tpu-v5p" << "2x2x4" << "000";
        QTest::newRow("v5p pod 16x20x28") << "tpu-v5p" << "16x20x28" << "111";
        QTest::newRow("v4 4x4x8") << "tpu-v4" << "4x4x8" << "111";
        QTest::newRow("v5e 8x16 wraps the 16 axis") << "tpu-v5e" << "8x16" << "01";
        QTest::newRow("v5e 4x4 none") << "tpu-v5e" << "4x4" << "00";
        QTest::newRow("v6e 16x16") << "tpu-v6e" << "16x16" << "11";
    }
    void wraparoundRules()
    {
        QFETCH(QString, chip);
        QFETCH(QString, shape);
        QFETCH(QString, wraps);
        const auto t = Topology::tpuSlice(*ChipCatalog::builtin().find(chip.toStdString()),
                                          parseShape(shape.toStdString(), "topology").value(), 1);
        QVERIFY(t.hasValue());
        QString got;
        for (const auto &axis : t->axes())
            got += axis.wraps ? QLatin1Char('1') : QLatin1Char('0');
        QCOMPARE(got, wraps);
    }

    void userChipErrorsNameTheField_data()
    {
        QTest::addColumn<QString>("patch");
        QTest::addColumn<QString>("path");
        QTest::newRow("negative bandwidth") << R"({"hbm_bandwidth": -1})" << "chip.hbm_bandwidth";
        QTest::newRow("string capacity") << R"({"hbm_bytes": "16GB"})" << "chip.hbm_bytes";
        QTest::newRow("unknown dtype") << R"({"peak_flops": {"bf16": 1e14, "fp6": 1e14}})" << "chip.peak_flops.fp6";
        QTest::newRow("no bf16 peak") << R"({"peak_flops": {"bf16": null, "int8": 1e14}})" << "chip.peak_flops.bf16";
        QTest::newRow("bad family") << R"({"family": "fpga"})" << "chip.family";
        QTest::newRow("efficiency above 1") << R"({"achievable": {"flops_fraction": 1.5}})" << "chip.achievable.flops_fraction";
        QTest::newRow("fp8 fraction zero") << R"({"achievable": {"fp8_flops_fraction": 0}})" << "chip.achievable.fp8_flops_fraction";
        QTest::newRow("legacy share above 1") << R"({"achievable": {"legacy_kernel_share": 1.2}})"
                                              << "chip.achievable.legacy_kernel_share";
        QTest::newRow("no ici") << R"({"ici": null})" << "chip.ici";
        // A malformed measured block is an error, not silently the reference's figures.
        QTest::newRow("achievable a number") << R"({"achievable": 0.6})" << "chip.achievable";
        QTest::newRow("achievable an array") << R"({"achievable": [0.6, 0.9]})" << "chip.achievable";
    }

    // The reference lookup reads an object that has not been checked yet: anything malformed gives
    // no reference (the parser then names the field), never a crash or a wrong family.
    void referenceForMalformedChips()
    {
        const auto &catalog = ChipCatalog::builtin();
        QVERIFY(!catalog.referenceFor(json(42)));
        QVERIFY(!catalog.referenceFor(json::object()));
        QVERIFY(!catalog.referenceFor(json{{"family", "gpu"}, {"peak_flops", "989 TFLOP/s"}}));
        QVERIFY(!catalog.referenceFor(json{{"family", "gpu"}, {"peak_flops", {{"bf16", -1.0}}}}));
        QVERIFY(!catalog.referenceFor(json{{"family", 7}, {"peak_flops", {{"bf16", 1e15}}}}));
        QVERIFY(!catalog.referenceFor(json{{"family", "gpu"}, {"peak_flops", {{"bf16", nullptr}}}}));
        // A catalog id under the other family is not that chip: the nearest of the stated family.
        const Chip *gpu = catalog.referenceFor(json{{"id", "tpu-v5e"}, {"family", "gpu"}, {"peak_flops", {{"bf16", 1e15}}}});
        QVERIFY(gpu && !gpu->isTpu());
        const Chip *tpu = catalog.referenceFor(json{{"id", 12}, {"family", "tpu"}, {"peak_flops", {{"bf16", 4.59e14}}}});
        QVERIFY(tpu && tpu->isTpu());
        QCOMPARE(QString::fromStdString(tpu->id), QString("tpu-v5p"));
    }
    void userChipErrorsNameTheField()
    {
        QFETCH(QString, patch);
        QFETCH(QString, path);
        json base = chipToJson(*ChipCatalog::builtin().find("tpu-v5e"));
        base["id"] = "my-chip";
        base.merge_patch(json::parse(patch.toStdString()));
        const auto parsed = chipFromJson(base, "chip");
        QVERIFY(!parsed.hasValue());
        QCOMPARE(QString::fromStdString(parsed.error().path), path);
        QVERIFY(!parsed.error().message.empty());
    }

    void hostileCatalogTextIsAnErrorNotACrash_data()
    {
        QTest::addColumn<QString>("text");
        QTest::newRow("number out of range") << R"({"format": "meshplan/chips", "version": 1, "chips": [1e400]})";
        QTest::newRow("truncated") << R"({"format": "meshplan/chips", "chips": [)";
        QTest::newRow("deep nesting") << QString(QStringLiteral("[")).repeated(10000);
        QTest::newRow("wrong format") << R"({"format": "meshplan/plan", "version": 1, "chips": []})";
        QTest::newRow("newer version") << R"({"format": "meshplan/chips", "version": 7, "chips": []})";
        QTest::newRow("chips not an array") << R"({"format": "meshplan/chips", "version": 1, "chips": 3})";
    }
    void hostileCatalogTextIsAnErrorNotACrash()
    {
        QFETCH(QString, text);
        const auto catalog = ChipCatalog::fromJsonText(text.toStdString(), "chips.json");
        QVERIFY(!catalog.hasValue());
        QVERIFY(!catalog.error().message.empty());
    }

    void userChipIsUsable()
    {
        json mine = chipToJson(*ChipCatalog::builtin().find("h100-sxm"));
        mine["id"] = "h100-overclocked";
        mine["peak_flops"] = {{"bf16", 1.2e15}};
        const auto chip = chipFromJson(mine, "hardware.chip");
        QVERIFY(chip.hasValue());
        QCOMPARE(chip->peakFlops(DType::Bf16), 1.2e15);
        QCOMPARE(chip->nvlink->domainSize, 8);
    }

    // A user's accelerator written with the datasheet keys alone: without measured fractions it
    // would run at 100% of its peak. It takes them from the catalog chip of its family with the
    // nearest bf16 peak (by ratio), or from the catalog chip with its id; keys it lists win.
    void inlineChipTakesMissingFiguresFromTheNearestCatalogChip()
    {
        const auto &catalog = ChipCatalog::builtin();
        const Chip &h100 = *catalog.find("h100-sxm");
        // torchtitan's benchmark H100s: 96 GB of HBM2e at 2.4 TB/s, the H100's 989 TFLOP/s.
        json mine = {{"id", "h100-96gb-hbm2e"}, {"family", "gpu"}, {"peak_flops", {{"bf16", 989e12}, {"fp8", 1979e12}}},
                     {"hbm_bytes", 96LL << 30}, {"hbm_bandwidth", 2.4e12},
                     {"nvlink", {{"bandwidth", 450e9}, {"domain_size", 8}}},
                     {"scale_out", {{"node_egress_bandwidth", 400e9}}}};
        QCOMPARE(catalog.referenceFor(mine), &h100); // H800 and H200 tie at 989: the first listed
        const auto chip = chipFromJson(mine, "hardware.chip", catalog.referenceFor(mine));
        QVERIFY(chip.hasValue());
        QCOMPARE(chip->achievable.flopsFraction, 0.5729);
        QCOMPARE(chip->achievable.matmulTileOverheadK, 137.0);
        QCOMPARE(chip->achievable.collectiveSmShare, 0.152);
        QCOMPARE(chip->hbmBandwidth, 2.4e12); // its own datasheet stays
        QCOMPARE(chip->attentionKernels.size(), h100.attentionKernels.size());
        QVERIFY(chip->decodeAttention.has_value() == h100.decodeAttention.has_value());
        QCOMPARE(chip->figuresFrom, std::string("h100-sxm"));
        QCOMPARE(chip->figureOwner("flops_fraction"), std::string("h100-sxm"));
        QVERIFY(std::count(chip->inheritedFigures.begin(), chip->inheritedFigures.end(), "attention_kernels") == 1);
        // Without a reference (the catalog itself, or a caller that wants none) nothing is filled.
        QCOMPARE(chipFromJson(mine, "hardware.chip")->achievable.flopsFraction, 1.0);

        // A key it lists is its own; the rest still come from the reference.
        mine["achievable"] = {{"flops_fraction", 0.5}};
        const auto partial = chipFromJson(mine, "hardware.chip", catalog.referenceFor(mine));
        QCOMPARE(partial->achievable.flopsFraction, 0.5);
        QCOMPARE(partial->achievable.hbmEfficiency, h100.achievable.hbmEfficiency);
        QCOMPARE(partial->figureOwner("flops_fraction"), std::string("h100-96gb-hbm2e"));
        QCOMPARE(partial->figureOwner("hbm_efficiency"), std::string("h100-sxm"));
        // Its own flops_fraction is not overridden by the reference's benchmark pair.
        QCOMPARE(partial->achievable.matmulBenchmarkFraction, 0.0);
        QCOMPARE(partial->achievableFlopsFraction(DType::Bf16), 0.5);

        // 500 TFLOP/s: A100's 312 is 1.60x away, H100's 989 1.98x.
        mine["peak_flops"] = {{"bf16", 500e12}};
        QCOMPARE(catalog.referenceFor(mine)->id, std::string("a100-80gb"));
        // A TPU looks among TPUs: 450 TFLOP/s is v5p's 459 (v6e lists 918, v4 275).
        json tpu = chipToJson(*catalog.find("tpu-v5p"));
        tpu["id"] = "my-tpu";
        tpu.erase("achievable");
        tpu.erase("sources");
        tpu["peak_flops"] = {{"bf16", 450e12}};
        const auto myTpu = chipFromJson(tpu, "hardware.chip", catalog.referenceFor(tpu));
        QCOMPARE(myTpu->figuresFrom, std::string("tpu-v5p"));
        QCOMPARE(myTpu->achievable.flopsFraction, 0.72);
        QCOMPARE(myTpu->achievable.iciEfficiency, 0.9);
        // The catalog's own id wins over the nearest peak: an edited A100 keeps A100's figures.
        json a100 = chipToJson(*catalog.find("a100-80gb"));
        a100.erase("achievable");
        a100["peak_flops"] = {{"bf16", 989e12}};
        QCOMPARE(catalog.referenceFor(a100)->id, std::string("a100-80gb"));
        // Nothing to go on: the parse reports the missing field as before.
        QVERIFY(!catalog.referenceFor(json{{"id", "x"}}));
        const auto broken = chipFromJson(json{{"id", "x"}}, "hardware.chip", catalog.referenceFor(json{{"id", "x"}}));
        QVERIFY(!broken.hasValue());
        QCOMPARE(QString::fromStdString(broken.error().path), QStringLiteral("hardware.chip.family"));
    }

    void absurdTopologiesAreRefused()
    {
        const Chip &v5e = *ChipCatalog::builtin().find("tpu-v5e");
        QVERIFY(!Topology::tpuSlice(v5e, {32, 16}, 1).hasValue()); // past the 16x16 pod
        QVERIFY(!Topology::tpuSlice(v5e, {16, 16}, 100000).hasValue()); // 25.6M chips
        QVERIFY(!parseShape("4x-4", "t").hasValue());
        QVERIFY(!parseShape("4x4x4x4", "t").hasValue());
        QVERIFY(!parseShape("", "t").hasValue());
        const Chip &h100 = *ChipCatalog::builtin().find("h100-sxm");
        QVERIFY(!Topology::gpuCluster(h100, 1, 16).hasValue()); // an H100 NVLink domain is 8
        QVERIFY(!Topology::gpuCluster(h100, 0, 8).hasValue());
        QVERIFY(Topology::gpuCluster(*ChipCatalog::builtin().find("gb200"), 4, 72).hasValue());
    }
};

QTEST_APPLESS_MAIN(TestChipCatalog)
#include "tst_chipcatalog.moc"
