package dev.fencing.recovery;

import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * The bases of the issuer migrations stored so far ({@link dev.fencing.issuer.OffsetTokenIssuer}: name to base),
 * which bound what a reset or a floor raise may assume: a migration's issuer hands out tokens above its base, so an
 * operation answered by an issuer below the highest stored base (the old issuer, or the new one read without its
 * offset) cannot vouch for the tokens in circulation and must not lower max_seen below that base.
 */
final class MigrationBases {

    /** None stored. */
    static final MigrationBases NONE = new MigrationBases(Map::of);

    private final Supplier<Map<String, Long>> stored;

    MigrationBases(Supplier<Map<String, Long>> stored) {
        this.stored = Objects.requireNonNull(stored, "stored bases");
    }

    /** The migration with the highest stored base, or {@code null} when none is stored. */
    Map.Entry<String, Long> highest() {
        Map<String, Long> bases = stored.get();
        Map.Entry<String, Long> top = null;
        if (bases != null) {
            for (Map.Entry<String, Long> entry : bases.entrySet()) {
                if (entry.getValue() != null && (top == null || entry.getValue() > top.getValue())) {
                    top = Map.entry(entry.getKey(), entry.getValue());
                }
            }
        }
        return top;
    }

    /**
     * Why {@code value} is too low for {@code top}'s tokens, for a refusal; {@code issuerRead} says whether the value
     * came from an issuer (then the fix is to ask the right one) or was given without one (then to give a higher one).
     */
    static String tooLow(String what, long value, Map.Entry<String, Long> top, boolean issuerRead) {
        String fix = issuerRead
                ? "Run it where the tokens' issuer answers with its offset (the actuator of an application with "
                + "fencing.issuer.offset.base, or the command line with --offset " + top.getKey() + ")"
                : "Give a value at or above " + top.getValue() + " (every token of that migration's issuer is above "
                + "its base; add the base to a token of that issuer read without it)";
        return what + " " + value + " is below the base " + top.getValue() + " that the issuer migration '"
                + top.getKey() + "' stored (fencing.issuer.offset.*): its issuer hands out tokens above "
                + top.getValue() + ", and one of them could write again. " + fix + ", or, if that migration was "
                + "abandoned before its issuer handed out any token, delete its row from the issuer base table first";
    }
}
