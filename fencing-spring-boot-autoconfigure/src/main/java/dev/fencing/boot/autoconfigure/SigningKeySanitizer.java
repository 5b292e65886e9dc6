package dev.fencing.boot.autoconfigure;

import org.springframework.boot.actuate.endpoint.SanitizableData;
import org.springframework.boot.actuate.endpoint.SanitizingFunction;

import java.util.regex.Pattern;

/**
 * Masks the signing secrets in {@code /actuator/configprops} and {@code /actuator/env} even where an application
 * shows values ({@code management.endpoint.configprops.show-values=always}): the value of every
 * {@code fencing.signing.keys.ID.secret} and {@code .private-key}, however the key is spelled (properties, camel case,
 * {@code FENCING_SIGNING_KEYS_ID_SECRET}). Public keys are left visible: they are no secret, and seeing them helps a
 * rotation.
 */
final class SigningKeySanitizer implements SanitizingFunction {

    private static final Pattern SECRET_KEY = Pattern.compile(
            "fencing\\.signing\\.keys\\.[^.]+\\.(secret|private-?key|private\\.key)");

    @Override
    public SanitizableData apply(SanitizableData data) {
        String key = data.getLowerCaseKey();
        if (key != null && data.getValue() != null && SECRET_KEY.matcher(key.replace('_', '.')).matches()) {
            return data.withSanitizedValue();
        }
        return data;
    }
}
