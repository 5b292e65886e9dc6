package dev.fencing.mode;

import dev.fencing.FencingConfigurationException;

import java.util.Locale;

/**
 * How the fence treats its verdicts on a resource. {@link #ENFORCE} (the default) refuses a missing, forged or
 * rejected token, and a key that names no entity, and the call does not run; {@link #OBSERVE} judges every call
 * exactly as {@code ENFORCE} does, counts and logs what it would have refused, and lets the call run (a rejected
 * token without advancing max_seen).
 */
public enum FenceMode {

    /** Refuse what the fence rejects: the call does not run. */
    ENFORCE,

    /** Count and log what the fence would refuse, and let the call run: the rollout mode. */
    OBSERVE;

    /**
     * The mode named {@code value} (case-insensitive, surrounding blanks ignored).
     *
     * @param where what set the value, for the message (a property name, an annotation attribute)
     * @throws FencingConfigurationException naming {@code where} and the value when it is neither mode
     */
    public static FenceMode parse(String value, String where) {
        if (value != null) {
            String text = value.trim().toUpperCase(Locale.ROOT);
            for (FenceMode mode : values()) {
                if (mode.name().equals(text)) {
                    return mode;
                }
            }
        }
        throw new FencingConfigurationException("Unknown fence mode '" + value + "' in " + where
                + "; use 'enforce' or 'observe'");
    }

    /** The mode's name as written in properties: {@code enforce} or {@code observe}. */
    public String value() {
        return name().toLowerCase(Locale.ROOT);
    }
}
