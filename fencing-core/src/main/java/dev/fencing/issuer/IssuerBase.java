package dev.fencing.issuer;

import java.util.Map;
import java.util.OptionalLong;

/**
 * Where the base of an {@link OffsetTokenIssuer} is kept, durably, one per migration name: the first base stored
 * for a name stays, so that every instance and every restart offsets by the same value. A stored base is never
 * lowered or changed; a new migration takes a new name.
 */
public interface IssuerBase {

    /** The base stored for {@code name}, empty when none is. */
    OptionalLong stored(String name);

    /**
     * Stores {@code base} for {@code name} unless a base is stored already, atomically against other instances, and
     * returns the stored base (the one given, or the earlier one, which is left as it is).
     *
     * @throws IllegalArgumentException when {@code name} is blank or too long, or {@code base} is not positive
     */
    long establish(String name, long base);

    /**
     * Every stored base by migration name, oldest first where the store knows when each was stored, for messages
     * and operators (a startup check names them when an instance runs without its offset). Empty when none is
     * stored, or when the store cannot list them (the default).
     */
    default Map<String, Long> storedBases() {
        return Map.of();
    }

    /**
     * The argument check of every implementation: a name of 1 to 128 characters, not blank, no control characters.
     *
     * @throws IllegalArgumentException naming what is wrong
     */
    static String checkName(String name) {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("issuer offset name must not be blank");
        }
        if (name.length() > 128 || name.chars().anyMatch(Character::isISOControl)) {
            throw new IllegalArgumentException("issuer offset name '" + name.replaceAll("\\p{Cntrl}", "?")
                    + "' must be at most 128 characters without control characters");
        }
        return name;
    }

    /** The argument check of {@link #establish}'s base. */
    static long checkBase(String name, long base) {
        if (base <= 0) {
            throw new IllegalArgumentException("base of issuer offset '" + name + "' must be positive, was " + base);
        }
        return base;
    }
}
