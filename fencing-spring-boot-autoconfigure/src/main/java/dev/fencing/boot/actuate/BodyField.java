package dev.fencing.boot.actuate;

/**
 * A field of an admin operation's JSON body, read strictly: the actuator hands each one over as text, and a value
 * Spring's conversion would bend ({@code "yes"} as {@code true}) or refuse without a word ({@code "abc"} for a number)
 * is bad input, named with its field and operation, before anything changes.
 */
final class BodyField {

    private BodyField() {
    }

    /**
     * {@code true} or {@code false} (JSON's booleans), or {@code null} when absent.
     *
     * @throws IllegalArgumentException naming the field, the operation and the value for anything else
     */
    static Boolean flag(String field, String value, String operation) {
        if (value == null) {
            return null;
        }
        return switch (value) {
            case "true" -> Boolean.TRUE;
            case "false" -> Boolean.FALSE;
            default -> throw new IllegalArgumentException("\"" + field + "\" of " + operation + " must be true or "
                    + "false, not '" + value + "': nothing changed");
        };
    }

    /**
     * A whole number that fits a {@code long}, or {@code null} when absent.
     *
     * @throws IllegalArgumentException naming the field, the operation and the value for anything else
     */
    static Long number(String field, String value, String operation) {
        if (value == null) {
            return null;
        }
        try {
            return Long.parseLong(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("\"" + field + "\" of " + operation + " must be a whole number (a "
                    + "token value), not '" + value + "': nothing changed", e);
        }
    }
}
