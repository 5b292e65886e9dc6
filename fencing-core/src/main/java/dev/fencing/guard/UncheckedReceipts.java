package dev.fencing.guard;

import dev.fencing.context.TokenUse;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.metrics.ResourceFamilies;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.Counter;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Internal: public for the carriers (fencing-web's filters, fencing-amqp's listener advice), not for applications.
 * Reports the tokens a carrier received with a request or message that completed successfully while no check
 * presented them and no carrier sent them on: whatever it wrote with them was not fenced (a write around the
 * {@code @Fenced} method, a repository without it), and its sender counted the tokens as used. Counted in
 * {@value FencingMetrics#UNCHECKED_RECEIPTS} by resource family (see {@link ResourceFamilies}) and
 * carrier, and logged at WARNING at most once per place and family every ten minutes. Thread-safe; nothing on the
 * path of a request without tokens.
 */
public final class UncheckedReceipts {

    private static final System.Logger LOG = System.getLogger(UncheckedReceipts.class.getName());

    private final ResourceFamilies<Counter> counters;
    private final LogPace pace = new LogPace(1_000, 600_000, null);

    /**
     * @param metrics where to count ({@link FencingMetrics#noop()}: nowhere; the WARNING is logged either way)
     * @param carrier the {@code carrier} tag: {@code http}, {@code amqp}
     */
    public UncheckedReceipts(FencingMetrics metrics, String carrier) {
        Objects.requireNonNull(metrics, "metrics");
        Objects.requireNonNull(carrier, "carrier");
        this.counters = new ResourceFamilies<>(ResourceFamilies.MAX_TAGS,
                family -> metrics.uncheckedReceipts(family, carrier));
    }

    /** A fresh use for each of {@code tokens}, to bind them with ({@code FencingContext.bindRemote(tokens, uses)}). */
    public static List<TokenUse> usesFor(List<FencingToken> tokens) {
        List<TokenUse> uses = new ArrayList<>(tokens.size());
        for (int i = 0; i < tokens.size(); i++) {
            uses.add(new TokenUse());
        }
        return uses;
    }

    /**
     * Reports each of {@code tokens} whose use was not marked, received at {@code where} (the request's method and
     * path pattern, the queue): a place of low cardinality, since it keys the log's pace. Never throws.
     */
    public void report(String where, List<FencingToken> tokens, List<TokenUse> uses) {
        try {
            for (int i = 0; i < tokens.size(); i++) {
                if (!uses.get(i).isUsed()) {
                    reportOne(where, tokens.get(i));
                }
            }
        } catch (RuntimeException ignored) {
            // a report is advisory; the request or message has completed
        }
    }

    private void reportOne(String where, FencingToken token) {
        FencingMetrics.increment(counters.of(token.resource()));
        String key = where + '\n' + ResourceFamilies.family(token.resource());
        long heldBack = pace.due(key, System.currentTimeMillis());
        if (heldBack >= 0) {
            LOG.log(System.Logger.Level.WARNING, () -> message(where, token)
                    + (heldBack > 0 ? " (" + heldBack + " more since the last line)" : ""));
        }
    }

    static String message(String where, FencingToken token) {
        return where + " received the fencing token of resource '" + FencingToken.printable(token.resource())
                + "' (value " + token.value() + ", holder '" + FencingToken.printable(token.holder()) + "') and "
                + "completed without a @Fenced check presenting it or a carrier "
                + "sending it on: whatever it wrote there was not fenced, while its sender counted the token as used. "
                + "Write through a @Fenced method of that resource (a write around it, such as an entity saved by "
                + "dirty checking or a repository without the annotation, is not checked), or stop sending this "
                + "place that token; a place that deliberately writes nothing with it (a duplicate an idempotent "
                + "consumer skips) can mark it seen with FencingContext.present(resource). Counted in "
                + FencingMetrics.UNCHECKED_RECEIPTS + "; logged at most once per place and resource family (the "
                + "resource up to its first ':') every ten minutes";
    }
}
