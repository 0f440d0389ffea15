#include "planinspector.h"

#include "base/dtype.h"
#include "hardware/chipcatalog.h"
#include "plan/plan.h"
#include "plan/plantitle.h"
#include "plan/rematpolicy.h"
#include "plansummary.h"
#include "rolestyle.h"

#include <QAbstractSpinBox>
#include <QApplication>
#include <QCheckBox>
#include <QKeyEvent>
#include <QComboBox>
#include <QCursor>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QPalette>
#include <QStandardItemModel>
#include <QPointer>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QTimer>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace meshplan::views {

using nlohmann::json;

namespace {

/// Stands for the palette's text colour in the summary's links until it is shown.
const QColor kSummaryLinkColor(0x01, 0x02, 0x03);

QString qs(const std::string &s)
{
    return QString::fromStdString(s);
}

json valueAt(const json &doc, const std::string &pointer)
{
    const json::json_pointer ptr(pointer);
    return doc.contains(ptr) ? doc.at(ptr) : json();
}

const QStringList kDtypes{QStringLiteral("fp32"), QStringLiteral("bf16"), QStringLiteral("fp16"),
                          QStringLiteral("fp8"),  QStringLiteral("int8"), QStringLiteral("int4"),
                          QStringLiteral("fp4")};

// Degrees are products of axis factors: the arrows double and halve rather than add one.
class DegreeSpinBox : public QSpinBox
{
public:
    using QSpinBox::QSpinBox;

    void stepBy(int steps) override
    {
        long long v = value();
        for (; steps > 0; --steps)
            v *= 2;
        for (; steps < 0 && v % 2 == 0; ++steps)
            v /= 2;
        setValue(static_cast<int>(std::min<long long>(v, maximum())));
    }
};

} // namespace

struct PlanInspector::Field {
    std::string pointer;
    QWidget *editor = nullptr;
    std::function<void(const json &)> show;
};

PlanInspector::~PlanInspector() = default;

PlanInspector::PlanInspector(QWidget *parent)
    : QWidget(parent)
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);

    m_summary = new QLabel(this);
    m_summary->setWordWrap(true);
    m_summary->setTextFormat(Qt::RichText);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::LinksAccessibleByMouse);
    m_summary->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    // The numbers are links drawn as plain text: a click asks the window to explain them.
    connect(m_summary, &QLabel::linkActivated, this, [this](const QString &link) {
        if (link.startsWith(QStringLiteral("explain:")))
            emit summaryRowClicked(link.mid(8));
    });
    connect(m_summary, &QLabel::linkHovered, this, [this](const QString &link) {
        if (link.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(QCursor::pos(), tr("Click to explain (F1)"), m_summary);
    });
    auto *summaryBox = new QGroupBox(tr("Summary"), this);
    (new QVBoxLayout(summaryBox))->addWidget(m_summary);
    layout->addWidget(summaryBox);

    // The operation picked on the roofline or the timeline, so the number behind a point stays
    // in view while the user edits the plan around it.
    m_selectedBox = new QGroupBox(tr("Selected operation"), this);
    m_selected = new QLabel(m_selectedBox);
    m_selected->setWordWrap(true);
    m_selected->setTextFormat(Qt::RichText);
    m_selected->setTextInteractionFlags(Qt::TextSelectableByMouse);
    (new QVBoxLayout(m_selectedBox))->addWidget(m_selected);
    m_selectedBox->setVisible(false);
    layout->addWidget(m_selectedBox);

    // Plan: title, model, hardware.
    auto *planBox = new QGroupBox(tr("Plan"), this);
    auto *planForm = new QFormLayout(planBox);
    m_title = new QLineEdit(planBox);
    addField(planForm, tr("Title"), "/title", m_title, tr("A name for this plan, saved with it and shown by meshplan-cli evaluate."),
             [this](const json &v) {
                 m_title->setText(v.is_string() ? qs(v.get<std::string>()) : QString());
                 m_title->setCursorPosition(0); // a long title reads from its start
             });
    connect(m_title, &QLineEdit::editingFinished, this, [this] {
        const std::string text = m_title->text().toStdString();
        if (valueAt(m_json, "/title") != json(text))
            emit fieldEdited(tr("Edit title"), "/title", text, -1);
    });
    m_model = new QLabel(planBox);
    m_model->setToolTip(tr("Drag a model card onto the mesh to change it."));
    planForm->addRow(tr("Model"), m_model);
    m_chip = new QComboBox(planBox);
    for (const auto &chip : model::ChipCatalog::builtin().chips())
        m_chip->addItem(qs(chip.name), qs(chip.id));
    m_chip->setToolTip(tr("The accelerator. Changing it keeps the cluster's chip count where the new chip allows."));
    planForm->addRow(tr("Chip"), m_chip);
    connect(m_chip, &QComboBox::activated, this, [this] { emitChip(); });

    m_tpuRows = new QWidget(planBox);
    auto *tpuForm = new QFormLayout(m_tpuRows);
    tpuForm->setContentsMargins(0, 0, 0, 0);
    m_shape = new QLineEdit(m_tpuRows);
    m_shape->setToolTip(tr("Slice shape in chips per torus axis, e.g. 16x16x32 (v4/v5p) or 16x16 (v5e/v6e)."));
    tpuForm->addRow(tr("Slice shape"), m_shape);
    m_slices = new QSpinBox(m_tpuRows);
    m_slices->setRange(1, 4096);
    m_slices->setToolTip(tr("Slices joined over the data-center network (axis \"slice\")."));
    tpuForm->addRow(tr("Slices"), m_slices);
    planForm->addRow(m_tpuRows);
    connect(m_shape, &QLineEdit::editingFinished, this, [this] { emitHardware(); });
    connect(m_slices, &QSpinBox::editingFinished, this, [this] { emitHardware(); });

    m_gpuRows = new QWidget(planBox);
    auto *gpuForm = new QFormLayout(m_gpuRows);
    gpuForm->setContentsMargins(0, 0, 0, 0);
    m_nodes = new QSpinBox(m_gpuRows);
    m_nodes->setRange(1, 1'000'000);
    m_nodes->setToolTip(tr("NVLink domains (nodes or racks) joined by the scale-out network."));
    gpuForm->addRow(tr("Nodes"), m_nodes);
    m_gpusPerNode = new QSpinBox(m_gpuRows);
    m_gpusPerNode->setRange(1, 576);
    m_gpusPerNode->setToolTip(tr("GPUs per NVLink domain: 8 for an HGX/DGX node, 72 for a GB200 NVL72 rack."));
    gpuForm->addRow(tr("GPUs per node"), m_gpusPerNode);
    planForm->addRow(m_gpuRows);
    connect(m_nodes, &QSpinBox::editingFinished, this, [this] { emitHardware(); });
    connect(m_gpusPerNode, &QSpinBox::editingFinished, this, [this] { emitHardware(); });
    layout->addWidget(planBox);

    // Parallelism.
    auto *parBox = new QGroupBox(tr("Parallelism"), this);
    auto *parForm = new QFormLayout(parBox);
    for (model::Role role : model::kRoles) {
        auto *spin = new DegreeSpinBox(parBox);
        spin->setRange(1, 10'000'000);
        spin->setKeyboardTracking(false);
        spin->setToolTip(roleDescription(role) + QStringLiteral("\n")
                         + tr("The other roles (FSDP first) absorb the change so the degrees multiply to the chip count."));
        auto *label = new QLabel(QStringLiteral("<span style='color:%1'>■</span> %2")
                                     .arg(roleColor(role).name(), roleLabel(role)), parBox);
        parForm->addRow(label, spin);
        m_degrees[static_cast<std::size_t>(role)] = spin;
        const int key = m_nextMergeKey++;
        connect(spin, &QSpinBox::valueChanged, this,
                [this, role, key](int degree) { emit degreeEdited(role, degree, key); });
    }
    m_chips = new QLabel(parBox);
    parForm->addRow(tr("Chips"), m_chips);
    m_parallelismForm = parForm;
    auto *zero = intEditor(tr("ZeRO stage"), "/parallelism/zero_stage", 0, 3);
    zero->setToolTip(tr("How far the data and context ranks shard the weight state (the expert ranks too, for the "
                        "weights every expert rank holds): 1 the optimizer, 2 also the gradients, 3 also the weights "
                        "(gathered layer by layer, as FSDP)."));
    parForm->addRow(tr("ZeRO stage"), zero);
    auto *sp = checkField(parBox, parForm, tr("Sequence parallel"), "/parallelism/sequence_parallel",
                          tr("Megatron sequence parallelism inside the tensor group."), tr("Sequence parallelism"), true);
    // Whether the tensor-parallel collectives hide behind the matmuls (parallelism.tensor_overlap):
    // the first entry removes the key, leaving it to the software stack.
    auto *tensorOverlap = optionalBoolField(
        parBox, parForm, tr("Tensor overlap"), "/parallelism/tensor_overlap", tr("overlapped"), tr("exposed"),
        tr("Whether the tensor-parallel all-gathers and reduce-scatters run beside the matmuls they feed "
           "(Transformer Engine's userbuffers: Megatron's --tp-comm-overlap, NeMo's tp_comm_overlap; torchtitan's "
           "async TP hides the forward's only). The stack's default: with sequence parallelism, NeMo overlaps "
           "layers wider than d_model 4096; the others leave them exposed (Megatron-LM's flag is off unless "
           "passed). MaxText on TPUs hides the backward's collectives behind the weight "
           "gradients even when exposed is chosen (XLA's async collectives)."),
        tr("Set tensor overlap"));
    auto *schedule = choiceEditor(tr("Pipeline schedule"), "/parallelism/pipeline_schedule",
                                  {QStringLiteral("gpipe"), QStringLiteral("1f1b"), QStringLiteral("interleaved-1f1b"),
                                   QStringLiteral("zero-bubble"), QStringLiteral("dualpipe")});
    parForm->addRow(tr("Schedule"), schedule);
    auto *microbatches = intEditor(tr("Microbatches"), "/parallelism/microbatches", 1, 1'000'000);
    parForm->addRow(tr("Microbatches"), microbatches);
    auto *virtualStages = intEditor(tr("Virtual stages"), "/parallelism/virtual_stages", 1, 1024);
    parForm->addRow(tr("Virtual stages"), virtualStages);
    // How a MoE layer's routed tokens reach their experts (parallelism.expert_dispatch): the
    // first entry removes the key, leaving it to the software stack.
    optionalChoiceField(parBox, parForm, tr("Expert dispatch"), "/parallelism/expert_dispatch", tr("stack's default"),
                        {{tr("all-to-all (every copy)"), QStringLiteral("all-to-all")},
                         {tr("deduplicated (DeepEP)"), QStringLiteral("deduplicated")}},
                        tr("How routed tokens cross the network to their experts' ranks: a plain all-to-all sends every "
                           "routed copy (Megatron-LM's alltoall dispatcher, torchtitan, DeepSpeed); DeepEP and HybridEP "
                           "send a token once per node that holds one of its experts, forward it over NVLink there, and "
                           "reach each such GPU once, not once per expert. The "
                           "stack's default: NeMo, Megatron-Core on Hopper or later (DeepEP, as its MoE guide advises) and "
                           "a well-tuned stack deduplicate, the other frameworks do not. "
                           "Mixture-of-experts models only."),
                        tr("Set expert dispatch"));
    auto *expertOverlap =
        checkField(parBox, parForm, tr("Expert overlap"), "/parallelism/expert_overlap",
                   tr("Run one micro-batch's expert all-to-alls beside another's computation (Megatron's "
                      "--overlap-moe-expert-parallel-comm): the forward and recomputed passes' all-to-alls hide behind a "
                      "MoE layer's compute, the backward's stay exposed (about half saved, as measured). The dualpipe "
                      "schedule hides them all by itself."),
                   tr("Expert overlap"), false);
    // Optimizer sharding, sequence parallelism, pipeline schedules and micro-batch overlap mean
    // nothing to serving.
    m_trainingOnly = {zero, sp, tensorOverlap, schedule, microbatches, virtualStages, expertOverlap};
    layout->addWidget(parBox);

    // Workload.
    auto *kindRow = new QWidget(this);
    auto *kindForm = new QFormLayout(kindRow);
    kindForm->setContentsMargins(0, 0, 0, 0);
    m_kind = new QComboBox(kindRow);
    m_kind->addItem(tr("Training"), QStringLiteral("training"));
    m_kind->addItem(tr("Inference"), QStringLiteral("inference"));
    kindForm->addRow(tr("Workload"), m_kind);
    connect(m_kind, &QComboBox::activated, this,
            [this] { emit kindEdited(m_kind->currentData().toString().toStdString()); });
    layout->addWidget(kindRow);

    m_training = new QGroupBox(tr("Training"), this);
    auto *tf = new QFormLayout(m_training);
    tf->addRow(tr("Sequence length"), intEditor(tr("Sequence length"), "/workload/seq_len", 1, 10'000'000));
    tf->addRow(tr("Global batch (sequences)"), intEditor(tr("Global batch"), "/workload/global_batch", 1, 1'000'000'000));
    tf->addRow(tr("Parameter dtype"), choiceEditor(tr("Parameter dtype"), "/workload/param_dtype", kDtypes));
    tf->addRow(tr("Compute dtype"), choiceEditor(tr("Compute dtype"), "/workload/compute_dtype", kDtypes));
    tf->addRow(tr("Optimizer"), choiceEditor(tr("Optimizer"), "/workload/optimizer",
                                             {QStringLiteral("adam"), QStringLiteral("adamw"), QStringLiteral("sgd"),
                                              QStringLiteral("adafactor")}));
    tf->addRow(tr("Optimizer dtype"), choiceEditor(tr("Optimizer dtype"), "/workload/optimizer_dtype", kDtypes));
    tf->addRow(tr("Gradient dtype"), choiceEditor(tr("Gradient dtype"), "/workload/grad_dtype", kDtypes));
    // The legacy levels and the framework policies plan files name (README); a {"save", "offload"}
    // object is edited in the file.
    QStringList remats;
    for (std::string_view name : model::rematPolicyChoices())
        remats << qs(std::string(name));
    tf->addRow(tr("Rematerialization"), choiceEditor(tr("Rematerialization"), "/workload/remat", remats));
    tf->addRow(tr("Attention"), choiceEditor(tr("Attention kernel"), "/workload/attention",
                                             {QStringLiteral("flash"), QStringLiteral("naive")}));
    // The software sets the attention kernel and how much elementwise work is fused
    // (docs/training-model.md); "well-tuned" removes the key.
    std::vector<std::pair<QString, QString>> stacks;
    for (std::string_view name : model::trainingStacks())
        stacks.emplace_back(qs(std::string(name)), qs(std::string(name)));
    optionalChoiceField(m_training, tf, tr("Software stack"), "/workload/stack", tr("well-tuned (default)"), stacks,
                        tr("The software that runs the plan: it chooses the attention kernel (cuDNN, FlashAttention-2 "
                           "or -3), how much elementwise work is fused and how context parallelism splits a sequence "
                           "(a ring of key/value blocks; PyTorch's for torchtitan; for deepspeed, Ulysses' all-to-alls "
                           "over the heads), and it sets the defaults of the tensor overlap, the expert dispatch and "
                           "torch.compile; under torchtitan, selective rematerialization rebuilds every second "
                           "matmul of a block rather than the attention core; under torchtitan and composer, full "
                           "rematerialization stops before the MLP's down projection. Well-tuned: the fastest kernel the chip lists; it overlaps tensor "
                           "collectives only when the plan asks."),
                        tr("Set software stack"));
    // The loss over the logits: one fused kernel or the framework's fp32 ops (workload.loss_fusion).
    optionalBoolField(m_training, tf, tr("Loss"), "/workload/loss_fusion", tr("fused kernel"), tr("unfused (fp32 ops)"),
                      tr("How the softmax cross-entropy reads the logits: a fused kernel (Megatron's "
                         "--cross-entropy-loss-fusion with Transformer Engine, a compiled loss) moves about 6 bytes per "
                         "logit per step, the framework's unfused fp32 ops about 50. It matters for small models with "
                         "large vocabularies. XLA (TPUs, MaxText) fuses the loss whatever is chosen here."),
                      tr("Set loss kernel"));
    // torch.compile on or off (workload.compile).
    optionalBoolField(m_training, tf, tr("torch.compile"), "/workload/compile", tr("compiled"), tr("eager"),
                      tr("Whether torchtitan or DeepSpeed compiles its blocks (or, under DeepSpeed, swaps in fused "
                         "kernels such as Liger's): compiled, the norms, rotary embedding and activations run as fused "
                         "kernels; eager, each op makes its own trip through HBM, about three times the bytes. A compiled "
                         "plan compiles its loss too. The default: compiled for a torchtitan Float8 plan on fp8 units "
                         "(torchtitan's Float8 needs torch.compile to fuse its casts), eager otherwise. Other stacks are "
                         "priced as they are whatever is chosen here."),
                      tr("Set torch.compile"));
    // The whole run (workload.train_tokens), in billions: the summary then gives days and cost
    // to train. "none" removes the key.
    auto *trainTokens = new QDoubleSpinBox(m_training);
    trainTokens->setRange(0, 1e6);
    trainTokens->setDecimals(0);
    trainTokens->setSingleStep(100);
    trainTokens->setSuffix(tr(" B"));
    trainTokens->setSpecialValueText(tr("none"));
    addField(tf, tr("Tokens to train"), "/workload/train_tokens", trainTokens,
             tr("The tokens of the whole training run, in billions (15,000 B for LLaMA-3): the summary gives the "
                "days and, at the chip's price per hour, the cost to train."),
             [trainTokens](const json &v) { trainTokens->setValue(v.is_number() ? v.get<double>() / 1e9 : 0.0); });
    const int tokensKey = m_nextMergeKey++;
    connect(trainTokens, &QDoubleSpinBox::valueChanged, this, [this, tokensKey](double billions) {
        emit fieldEdited(tr("Tokens to train"), "/workload/train_tokens",
                         billions > 0 ? json(static_cast<std::int64_t>(std::llround(billions * 1e9))) : json(), tokensKey);
    });
    layout->addWidget(m_training);

    m_inference = new QGroupBox(tr("Inference"), this);
    auto *inf = new QFormLayout(m_inference);
    inf->addRow(tr("Batch (sequences)"), intEditor(tr("Batch"), "/workload/batch", 1, 100'000'000));
    inf->addRow(tr("Prompt length"), intEditor(tr("Prompt length"), "/workload/prompt_len", 1, 10'000'000));
    inf->addRow(tr("Generated tokens"), intEditor(tr("Generated tokens"), "/workload/generate_len", 1, 10'000'000));
    inf->addRow(tr("Weight dtype"), choiceEditor(tr("Weight dtype"), "/workload/weight_dtype", kDtypes));
    inf->addRow(tr("KV cache dtype"), choiceEditor(tr("KV cache dtype"), "/workload/kv_dtype", kDtypes));
    inf->addRow(tr("Compute dtype"), choiceEditor(tr("Compute dtype"), "/workload/compute_dtype", kDtypes));
    auto *serving = new QComboBox(m_inference);
    serving->addItems({QStringLiteral("interleaved"), QStringLiteral("disaggregated")});
    addField(inf, tr("Serving"), "/workload/serving", serving,
             tr("Interleaved: every replica prefills and decodes. Disaggregated: some replicas only prefill "
                "and send the KV cache to the others."),
             [serving](const json &v) {
                 if (v.is_string())
                     serving->setCurrentText(qs(v.get<std::string>()));
             });
    connect(serving, &QComboBox::activated, this,
            [this, serving] { emit servingEdited(serving->currentText().toStdString()); });
    inf->addRow(tr("Prefill chips"), intEditor(tr("Prefill chips"), "/workload/prefill_chips", 0, 10'000'000));
    auto *target = new QDoubleSpinBox(m_inference);
    target->setRange(0, 10);
    target->setDecimals(4);
    target->setSingleStep(0.005);
    target->setSuffix(tr(" s"));
    target->setSpecialValueText(tr("none"));
    addField(inf, tr("Latency target"), "/workload/latency_target_s", target,
             tr("Per-token latency target; plans that miss it are flagged."),
             [target](const json &v) { target->setValue(v.is_number() ? v.get<double>() : 0.0); });
    const int targetKey = m_nextMergeKey++;
    connect(target, &QDoubleSpinBox::valueChanged, this, [this, targetKey](double v) {
        emit fieldEdited(tr("Latency target"), "/workload/latency_target_s", v > 0 ? json(v) : json(), targetKey);
    });
    layout->addWidget(m_inference);
    layout->addStretch(1);

    m_note = new QLabel(this);
    m_note->setWordWrap(true);
    m_note->setObjectName(QStringLiteral("refusalNote"));
    m_note->setStyleSheet(QStringLiteral("color: #c0392b;"));
    m_note->setVisible(false);

    for (QWidget *child : findChildren<QWidget *>()) {
        child->installEventFilter(this);
        // The wheel scrolls the inspector; a field takes it only once clicked or tabbed into.
        if (qobject_cast<QAbstractSpinBox *>(child) || qobject_cast<QComboBox *>(child))
            child->setFocusPolicy(Qt::StrongFocus);
        // A choice as long as "save_dot_except_mlpwi" must not widen the inspector past its dock
        // (it would clip every field and the summary on the right); its list still shows it whole.
        if (auto *combo = qobject_cast<QComboBox *>(child)) {
            combo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
            combo->setMinimumContentsLength(12);
            // Where the dock is wide enough, the field still takes the row, whatever the style's
            // form growth policy.
            combo->setSizePolicy(QSizePolicy::Expanding, combo->sizePolicy().verticalPolicy());
        }
    }
}

void PlanInspector::addField(QFormLayout *form, const QString &label, const std::string &pointer, QWidget *editor,
                             const QString &toolTip, std::function<void(const json &)> show)
{
    editor->setToolTip(toolTip);
    editor->setObjectName(qs(pointer));
    if (form)
        form->addRow(label, editor);
    m_fields.push_back({pointer, editor, std::move(show)});
}

QComboBox *PlanInspector::optionalBoolField(QWidget *parent, QFormLayout *form, const QString &label,
                                            const std::string &pointer, const QString &whenTrue,
                                            const QString &whenFalse, const QString &toolTip, const QString &undoText)
{
    auto *combo = new QComboBox(parent);
    combo->addItem(tr("stack's default"));
    combo->addItem(whenTrue);
    combo->addItem(whenFalse);
    addField(form, label, pointer, combo, toolTip,
             [combo](const json &v) { combo->setCurrentIndex(v.is_boolean() ? (v.get<bool>() ? 1 : 2) : 0); });
    connect(combo, &QComboBox::activated, this, [this, pointer, undoText](int index) {
        emit fieldEdited(undoText, pointer, index == 0 ? json() : json(index == 1), -1);
    });
    return combo;
}

QCheckBox *PlanInspector::checkField(QWidget *parent, QFormLayout *form, const QString &label, const std::string &pointer,
                                     const QString &toolTip, const QString &undoText, bool writeFalse)
{
    auto *box = new QCheckBox(parent);
    addField(form, label, pointer, box, toolTip, [box](const json &v) { box->setChecked(v.is_boolean() && v.get<bool>()); });
    connect(box, &QCheckBox::toggled, this, [this, pointer, undoText, writeFalse](bool on) {
        emit fieldEdited(undoText, pointer, on || writeFalse ? json(on) : json(), -1);
    });
    return box;
}

QComboBox *PlanInspector::optionalChoiceField(QWidget *parent, QFormLayout *form, const QString &label,
                                              const std::string &pointer, const QString &unset,
                                              const std::vector<std::pair<QString, QString>> &choices,
                                              const QString &toolTip, const QString &undoText)
{
    auto *combo = new QComboBox(parent);
    combo->addItem(unset, QString());
    for (const auto &[text, value] : choices)
        combo->addItem(text, value);
    addField(form, label, pointer, combo, toolTip, [combo](const json &v) {
        combo->setCurrentIndex(v.is_string() ? std::max(0, combo->findData(qs(v.get<std::string>()))) : 0);
    });
    connect(combo, &QComboBox::activated, this, [this, combo, pointer, undoText] {
        const QString value = combo->currentData().toString();
        emit fieldEdited(undoText, pointer, value.isEmpty() ? json() : json(value.toStdString()), -1);
    });
    return combo;
}

QSpinBox *PlanInspector::intEditor(const QString &label, const std::string &pointer, int min, int max)
{
    auto *spin = new QSpinBox(this);
    spin->setRange(min, max);
    spin->setAccelerated(true);
    spin->setKeyboardTracking(false); // one edit per Enter or arrow step, not per typed digit
    spin->setObjectName(qs(pointer));
    spin->setToolTip(label);
    m_fields.push_back({pointer, spin, [spin](const json &v) {
                            if (v.is_number_integer())
                                spin->setValue(v.get<int>());
                        }});
    const int key = m_nextMergeKey++;
    // Every step of the spin box is an edit; steps on the same field merge into one undo step.
    connect(spin, &QSpinBox::valueChanged, this,
            [this, label, pointer, key](int v) { emit fieldEdited(tr("Set %1").arg(label.toLower()), pointer, v, key); });
    return spin;
}

QComboBox *PlanInspector::choiceEditor(const QString &label, const std::string &pointer, const QStringList &choices)
{
    auto *combo = new QComboBox(this);
    combo->addItems(choices);
    combo->setObjectName(qs(pointer));
    combo->setToolTip(label);
    m_fields.push_back({pointer, combo, [combo](const json &v) {
                            if (v.is_string()) {
                                combo->setCurrentText(qs(v.get<std::string>()));
                            } else if (v.is_object()) {
                                // An object the file spells out (remat's {"save", "offload"}): say
                                // so rather than keep the previous plan's choice on show. The entry
                                // cannot be picked; choosing a named value replaces the object.
                                const QString custom = tr("custom (in the file)");
                                int index = combo->findText(custom);
                                if (index < 0) {
                                    combo->addItem(custom);
                                    index = combo->count() - 1;
                                    if (auto *items = qobject_cast<QStandardItemModel *>(combo->model()))
                                        items->item(index)->setEnabled(false);
                                }
                                combo->setCurrentIndex(index);
                            }
                        }});
    connect(combo, &QComboBox::activated, this, [this, label, pointer, combo] {
        emit fieldEdited(tr("Set %1").arg(label.toLower()), pointer, combo->currentText().toStdString(), -1);
    });
    return combo;
}

void PlanInspector::emitHardware()
{
    // Shape and size only: the chip stays as the plan has it (a catalog id or an inline chip).
    json hardware = valueAt(m_json, "/hardware");
    if (!hardware.is_object())
        return;
    if (m_tpuRows->isVisibleTo(this)) {
        json shape = json::array();
        for (const QString &part : m_shape->text().split(QLatin1Char('x'), Qt::SkipEmptyParts)) {
            bool ok = false;
            const int n = part.trimmed().toInt(&ok);
            shape.push_back(ok ? json(n) : json(part.trimmed().toStdString()));
        }
        hardware["topology"] = shape;
        if (m_slices->value() > 1)
            hardware["slices"] = m_slices->value();
        else
            hardware.erase("slices");
    } else {
        hardware["topology"] = {{"nodes", m_nodes->value()}, {"gpus_per_node", m_gpusPerNode->value()}};
        hardware.erase("slices");
    }
    if (hardware != valueAt(m_json, "/hardware"))
        emit hardwareEdited(hardware);
}

void PlanInspector::emitChip()
{
    const std::string id = m_chip->currentData().toString().toStdString();
    const json current = valueAt(m_json, "/hardware/chip");
    // The inline entry stands for the plan's own chip: choosing it changes nothing.
    if (id.empty() || (current.is_string() && current.get<std::string>() == id))
        return;
    emit chipEdited(id);
}

bool PlanInspector::eventFilter(QObject *watched, QEvent *event)
{
    if (event->type() == QEvent::Wheel) {
        auto *widget = qobject_cast<QWidget *>(watched);
        if ((qobject_cast<QAbstractSpinBox *>(watched) || qobject_cast<QComboBox *>(watched)) && widget
            && !widget->hasFocus()) {
            // Passed on unaccepted, so the scroll area around the inspector scrolls instead.
            event->ignore();
            return true;
        }
    }
    if (event->type() == QEvent::ShortcutOverride) {
        const auto *key = static_cast<QKeyEvent *>(event);
        if (key->matches(QKeySequence::Undo) || key->matches(QKeySequence::Redo)
            || key->keyCombination() == QKeyCombination(Qt::ControlModifier | Qt::ShiftModifier, Qt::Key_Z)) {
            // Not accepted: the window's Undo/Redo shortcut fires instead of the field's text undo.
            // The typed value is committed first, so undo takes back what the user just entered.
            if (auto *widget = qobject_cast<QWidget *>(watched))
                widget->clearFocus();
            event->ignore();
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

void PlanInspector::setPlan(const json &planJson, const model::Plan &plan,
                            const model::Expected<model::Evaluation> &evaluation)
{
    m_json = planJson;
    // Show effective values: the normalized plan fills defaults the file leaves out.
    json shown = model::planToJson(plan);
    shown["title"] = planJson.value("title", json(""));
    for (const auto &field : m_fields) {
        const QSignalBlocker block(field.editor);
        field.show(valueAt(shown, field.pointer));
    }
    {
        const QSignalBlocker block(m_chip);
        // A chip defined inside the plan has no catalog entry: it gets one of its own, first.
        const bool inlineChip = valueAt(planJson, "/hardware/chip").is_object();
        const int inlineIndex = m_chip->findData(QString());
        if (inlineIndex >= 0 && !inlineChip)
            m_chip->removeItem(inlineIndex);
        if (inlineChip) {
            const QString name = tr("%1 (defined in this plan)").arg(qs(plan.topology.chip().name));
            if (inlineIndex >= 0)
                m_chip->setItemText(inlineIndex, name);
            else
                m_chip->insertItem(0, name, QString());
            m_chip->setCurrentIndex(0);
        } else {
            m_chip->setCurrentIndex(m_chip->findData(qs(plan.topology.chip().id)));
        }
    }
    const bool tpu = plan.topology.chip().isTpu();
    m_tpuRows->setVisible(tpu);
    m_gpuRows->setVisible(!tpu);
    const auto &axes = plan.topology.axes();
    if (tpu) {
        QStringList dims;
        int slices = 1;
        for (const auto &axis : axes) {
            if (axis.name == "slice")
                slices = axis.size;
            else
                dims << QString::number(axis.size);
        }
        const QSignalBlocker b1(m_shape), b2(m_slices);
        m_shape->setText(dims.join(QLatin1Char('x')));
        m_slices->setValue(slices);
    } else {
        const QSignalBlocker b1(m_nodes), b2(m_gpusPerNode);
        for (const auto &axis : axes) {
            if (axis.name == "node")
                m_nodes->setValue(axis.size);
            else if (axis.name == "gpu")
                m_gpusPerNode->setValue(axis.size);
        }
    }
    for (model::Role role : model::kRoles) {
        auto *spin = m_degrees[static_cast<std::size_t>(role)];
        const QSignalBlocker block(spin);
        spin->setValue(plan.parallelism.degree(role));
    }
    m_chips->setText(QString::number(plan.topology.chipCount()) + QStringLiteral(" · ") + qs(plan.topology.describe()));
    m_model->setText(qs(plan.model.name));
    m_title->setPlaceholderText(qs(model::generatedTitle(plan))); // what a plan without a title is called
    const bool training = plan.kind == model::WorkloadKind::Training;
    {
        const QSignalBlocker block(m_kind);
        m_kind->setCurrentIndex(training ? 0 : 1);
    }
    m_training->setVisible(training);
    m_inference->setVisible(!training);
    for (QWidget *editor : m_trainingOnly)
        m_parallelismForm->setRowVisible(editor, training);
    m_summaryHtml = planSummaryHtml(plan, evaluation, kSummaryLinkColor);
    updateSummaryText();

    // A plan that loads but cannot be evaluated (microbatches 17) marks the field to blame,
    // as a refused edit does: the value stays, the reason is beside it.
    clearMark();
    if (!evaluation && !evaluation.error().path.empty()) {
        std::string pointer = "/" + evaluation.error().path;
        std::replace(pointer.begin(), pointer.end(), '.', '/');
        if (editorAt(pointer))
            markField(pointer, qs(evaluation.error().message));
    }
}

QWidget *PlanInspector::editorAt(const std::string &pointer) const
{
    if (QWidget *editor = editorFor(pointer))
        return editor;
    for (model::Role role : model::kRoles)
        if (pointer == "/parallelism/" + std::string(model::roleName(role)))
            return m_degrees[static_cast<std::size_t>(role)];
    return nullptr;
}

void PlanInspector::showRefusal(const std::string &pointer, const json &value, const QString &why)
{
    QWidget *editor = editorAt(pointer);
    if (!editor)
        return;
    const QSignalBlocker block(editor);
    if (auto *spin = qobject_cast<QSpinBox *>(editor); spin && value.is_number_integer())
        spin->setValue(static_cast<int>(std::clamp<std::int64_t>(value.get<std::int64_t>(), spin->minimum(), spin->maximum())));
    else if (auto *combo = qobject_cast<QComboBox *>(editor); combo && value.is_string())
        combo->setCurrentText(qs(value.get<std::string>()));
    else if (auto *line = qobject_cast<QLineEdit *>(editor); line && value.is_string())
        line->setText(qs(value.get<std::string>()));
    clearMark();
    markField(pointer, why);
}

void PlanInspector::markField(const std::string &pointer, const QString &why)
{
    QWidget *editor = editorAt(pointer);
    auto *form = editor && editor->parentWidget() ? qobject_cast<QFormLayout *>(editor->parentWidget()->layout()) : nullptr;
    if (!form)
        return;
    tint(editor);
    editor->setProperty("refused", true);
    int row = -1;
    QFormLayout::ItemRole itemRole;
    form->getWidgetPosition(editor, &row, &itemRole);
    m_note->setText(why);
    form->insertRow(row + 1, m_note);
    m_note->setVisible(true);
    m_markedPointer = pointer;
    // The inspector scrolls: bring the marked field and its reason into view.
    for (QWidget *w = parentWidget(); w; w = w->parentWidget())
        if (auto *scroll = qobject_cast<QScrollArea *>(w)) {
            QTimer::singleShot(0, scroll, [scroll, note = QPointer<QLabel>(m_note), field = QPointer<QWidget>(editor)] {
                if (field)
                    scroll->ensureWidgetVisible(field, 20, 20);
                if (note && note->isVisible())
                    scroll->ensureWidgetVisible(note, 20, 20);
            });
            break;
        }
}

void PlanInspector::tint(QWidget *editor)
{
    // Tinted rather than restyled: a style sheet would replace the spin box's native arrows. The
    // application's palette, not ours: a theme switch reaches this widget only with its events.
    QPalette tinted = QApplication::palette();
    const QColor base = tinted.color(QPalette::Base);
    const QColor red(0xc0, 0x39, 0x2b);
    const auto mix = [](float a, float b) { return 0.7f * a + 0.3f * b; };
    tinted.setColor(QPalette::Base, QColor::fromRgbF(mix(base.redF(), red.redF()), mix(base.greenF(), red.greenF()),
                                                     mix(base.blueF(), red.blueF())));
    editor->setPalette(tinted);
}

void PlanInspector::updateSummaryText()
{
    // The links take the text colour of the palette in use, so they read as the rows always did.
    QString html = m_summaryHtml;
    html.replace(kSummaryLinkColor.name(), palette().color(QPalette::WindowText).name());
    m_summary->setText(html);
}

void PlanInspector::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::ApplicationPaletteChange)
        updateSummaryText();
    if (event->type() == QEvent::ApplicationPaletteChange && !m_markedPointer.empty())
        if (QWidget *editor = editorAt(m_markedPointer))
            tint(editor);
}

void PlanInspector::clearMark()
{
    if (m_markedPointer.empty())
        return;
    if (QWidget *editor = editorAt(m_markedPointer)) {
        editor->setPalette(QPalette());
        editor->setProperty("refused", false);
    }
    if (auto *form = m_note->parentWidget() ? qobject_cast<QFormLayout *>(m_note->parentWidget()->layout()) : nullptr) {
        const auto taken = form->takeRow(m_note);
        delete taken.labelItem;
        delete taken.fieldItem; // the layout item only: the note itself lives on
    }
    m_note->setParent(this);
    m_note->setVisible(false);
    m_markedPointer.clear();
}

QString PlanInspector::markedReason() const
{
    return m_markedPointer.empty() ? QString() : m_note->text();
}

QWidget *PlanInspector::editorFor(const std::string &pointer) const
{
    for (const auto &field : m_fields)
        if (field.pointer == pointer)
            return field.editor;
    return nullptr;
}

QSpinBox *PlanInspector::degreeEditor(model::Role role) const
{
    return m_degrees[static_cast<std::size_t>(role)];
}

QString PlanInspector::summaryText() const
{
    return m_summary->text();
}

void PlanInspector::setSelectedOperation(const QString &html)
{
    m_selected->setText(html);
    m_selectedBox->setVisible(!html.isEmpty());
}

QString PlanInspector::selectedOperationText() const
{
    return m_selectedBox->isHidden() ? QString() : m_selected->text();
}

} // namespace meshplan::views
