package dev.fencing.boot.autoconfigure;

import org.springframework.boot.actuate.endpoint.SanitizableData;
import org.springframework.boot.actuate.endpoint.SanitizingFunction;

import java.util.HashSet;
import java.util.Set;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/**
 * Masks the signing secrets in {@code /actuator/configprops} and {@code /actuator/env} even where an application
 * shows values ({@code management.endpoint.configprops.show-values=always}): the value of every
 * {@code fencing.signing.keys.ID.secret} and {@code .private-key}, however the key is spelled (properties, camel case,
 * {@code FENCING_SIGNING_KEYS_ID_SECRET}), and any other entry whose value holds one of the configured secrets or
 * private keys (the environment variable a {@code ${...}} placeholder reads it from, a command line that passed it).
 * Public keys are left visible: they are no secret, and seeing them helps a rotation.
 */
final class SigningKeySanitizer implements SanitizingFunction {

    private static final Pattern SECRET_KEY = Pattern.compile(
            "fencing\\.signing\\.keys\\.[^.]+\\.(secret|private-?key|private\\.key)");

    /** Shorter values are not matched by value: they are not key material, and would mask unrelated entries. */
    static final int MIN_SECRET_LENGTH = 16;

    private final Supplier<Set<String>> secrets;

    /** Masks by property name only. */
    SigningKeySanitizer() {
        this(Set::of);
    }

    /** Masks by property name and, for any entry, by value: {@code secrets} are the configured key material. */
    SigningKeySanitizer(Supplier<Set<String>> secrets) {
        this.secrets = secrets;
    }

    @Override
    public SanitizableData apply(SanitizableData data) {
        String key = data.getLowerCaseKey();
        if (key != null && data.getValue() != null && SECRET_KEY.matcher(key.replace('_', '.')).matches()) {
            return data.withSanitizedValue();
        }
        if (data.getValue() instanceof CharSequence value) {
            String text = value.toString();
            for (String secret : secrets.get()) {
                if (text.contains(secret)) {
                    return data.withSanitizedValue();
                }
            }
        }
        return data;
    }

    /** The secrets and private keys of {@code signing}'s keys, trimmed, at least {@link #MIN_SECRET_LENGTH} long. */
    static Set<String> secretsOf(FencingProperties.Signing signing) {
        Set<String> out = new HashSet<>();
        for (FencingProperties.Key key : signing.getKeys().values()) {
            for (String material : new String[] {key.getSecret(), key.getPrivateKey()}) {
                if (material == null) {
                    continue;
                }
                // a PEM's lines one by one as well: an environment variable may hold it with other line breaks
                String body = material.replaceAll("-----[^-]+-----", "");
                for (String part : (material.trim() + "\n" + body).split("\\s+")) {
                    if (part.length() >= MIN_SECRET_LENGTH) {
                        out.add(part);
                    }
                }
            }
        }
        return Set.copyOf(out);
    }
}
