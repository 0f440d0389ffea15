// Decks (plan/deck.h): slides by path or inline, a bad slide marked rather than the deck refused,
// and a round trip through the file format.
#include "hardware/chipcatalog.h"
#include "plan/deck.h"
#include "transformer/modelcatalog.h"

#include <QFile>
#include <QtTest>

using namespace meshplan::model;

namespace {

const QString kData = QStringLiteral(MESHPLAN_TEST_DATA);

std::string readText(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll().toStdString() : std::string();
}

// Resolves slide paths against tests/data/decks, as the app does against the deck's folder.
Expected<std::string> reader(const std::string &relative)
{
    QFile f(kData + QStringLiteral("/decks/") + QString::fromStdString(relative));
    if (!f.open(QIODevice::ReadOnly))
        return Error{"", "does not exist"};
    return f.readAll().toStdString();
}

Expected<Deck> parse(const std::string &text)
{
    return deckFromText(text, "test.meshdeck", reader, ChipCatalog::builtin(), ModelCatalog::builtin());
}

} // namespace

class TestDeck : public QObject
{
    Q_OBJECT

private slots:
    void readsSlidesByPathAndInline();
    void badSlidesAreMarked();
    void roundTrip();
    void notADeck_data();
    void notADeck();
};

void TestDeck::readsSlidesByPathAndInline()
{
    const auto deck = parse(readText(kData + QStringLiteral("/decks/review.meshdeck")));
    QVERIFY2(deck.hasValue(), deck ? "" : deck.error().toString().c_str());
    QCOMPARE(deck->title, std::string("Cluster plan review"));
    QCOMPARE(deck->slides.size(), std::size_t(4));
    const DeckSlide &first = deck->slides[0];
    QVERIFY(first.plan.has_value());
    QCOMPARE(first.planPath, std::string("../plans/llama-3-70b-v5p-16x16x32.meshplan"));
    QCOMPARE(first.plan->topology.chipCount(), std::int64_t(8192));
    QCOMPARE(first.charts, (std::vector<std::string>{"memory", "timeline"}));
    QVERIFY(first.problem.empty());
    const DeckSlide &second = deck->slides[1];
    QVERIFY(second.plan.has_value());
    QVERIFY(second.planPath.empty());
    QCOMPARE(second.plan->kind, WorkloadKind::Inference);
    QCOMPARE(second.notes, std::string("int8 weights halve the bytes each decode step reads."));
}

void TestDeck::badSlidesAreMarked()
{
    const auto deck = parse(readText(kData + QStringLiteral("/decks/review.meshdeck")));
    QVERIFY(deck.hasValue());
    const DeckSlide &moved = deck->slides[2];
    QVERIFY(!moved.plan);
    QCOMPARE(moved.problem, std::string("../plans/no-such-plan.meshplan: does not exist"));
    QCOMPARE(moved.title, std::string("A slide whose plan was moved"));
    const DeckSlide &typo = deck->slides[3];
    QVERIFY(!typo.plan);
    QVERIFY2(typo.problem.find("slides[3].plan.parallelism.tensor") == 0, typo.problem.c_str());
    // Not an object, no plan, a plan of the wrong type: each marked on its own slide.
    const auto odd = parse(R"({"format": "meshplan/deck", "version": 1, "slides": [3, {"title": "x"}, {"plan": 7}]})");
    QVERIFY(odd.hasValue());
    QCOMPARE(odd->slides.size(), std::size_t(3));
    QVERIFY(odd->slides[0].problem.find("slides[0]") == 0);
    QCOMPARE(odd->slides[1].problem, std::string("slides[1].plan: missing"));
    QVERIFY(odd->slides[2].problem.find("a relative path or a plan object") != std::string::npos);
}

void TestDeck::roundTrip()
{
    const auto deck = parse(readText(kData + QStringLiteral("/decks/review.meshdeck")));
    QVERIFY(deck.hasValue());
    const nlohmann::json written = deckToJson(*deck);
    // Paths stay paths, inline plans stay inline: the file is the one that was read.
    QCOMPARE(written["slides"][0]["plan"], nlohmann::json("../plans/llama-3-70b-v5p-16x16x32.meshplan"));
    QVERIFY(written["slides"][1]["plan"].is_object());
    const auto again = parse(written.dump());
    QVERIFY(again.hasValue());
    QCOMPARE(deckToJson(*again), written);
    // A slide made from an open plan is written inline and reads back as the same plan.
    Deck made;
    made.slides.push_back(slideFromPlan(*deck->slides[0].plan, ""));
    const auto reread = parse(deckToJson(made).dump());
    QVERIFY(reread.hasValue());
    QCOMPARE(planToJson(*reread->slides[0].plan), planToJson(*deck->slides[0].plan));
    QVERIFY(!reread->slides[0].title.empty());
}

void TestDeck::notADeck_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("message");
    QTest::newRow("not JSON") << QStringLiteral("{slides") << QStringLiteral("is not valid JSON");
    QTest::newRow("a plan") << QStringLiteral(R"({"format": "meshplan/plan", "version": 1})")
                            << QStringLiteral("not a Meshplan deck");
    QTest::newRow("newer") << QStringLiteral(R"({"format": "meshplan/deck", "version": 9, "slides": []})")
                           << QStringLiteral("reads versions up to 1");
    QTest::newRow("no slides") << QStringLiteral(R"({"format": "meshplan/deck", "version": 1})")
                               << QStringLiteral("\"slides\" must be an array");
}

void TestDeck::notADeck()
{
    QFETCH(QString, text);
    QFETCH(QString, message);
    const auto deck = parse(text.toStdString());
    QVERIFY(!deck.hasValue());
    QVERIFY2(QString::fromStdString(deck.error().message).contains(message), deck.error().message.c_str());
}

QTEST_APPLESS_MAIN(TestDeck)
#include "tst_deck.moc"
