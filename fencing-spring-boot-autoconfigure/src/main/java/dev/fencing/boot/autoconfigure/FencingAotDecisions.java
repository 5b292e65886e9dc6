package dev.fencing.boot.autoconfigure;

import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;

import java.io.IOException;
import java.io.StringReader;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;

/**
 * What the starter's conditions decided from an application's {@code fencing.*} properties when it was built with
 * AOT processing: whether fencing is on, the store and issuer types, signing, the token filter, the carriers, the
 * offset, compaction, the admin endpoint. The code AOT processing generates registers them as a bean
 * ({@link #recorded}); {@link FencingAotCheck} compares them with the properties the application runs with. Only
 * decisions are recorded, never a value that could be a secret (a key, a URL, a path).
 */
public final class FencingAotDecisions {

    /** The decision of whether tokens are signed or verified at all. */
    static final String SIGNING = "fencing.signing.keys or fencing.signing.scheme";

    /** The decision of whether this application signs what it acquires. */
    static final String SIGNER = "fencing.signing.current-key-id with that key's secret or private-key";

    /** The name of the bean the generated code registers. */
    static final String BEAN = "dev.fencing.boot.autoconfigure.fencingAotDecisions";

    private final Map<String, String> decisions;

    private FencingAotDecisions(Map<String, String> decisions) {
        this.decisions = decisions;
    }

    /** The decisions of a build, from their {@link #text} form: called by the code AOT processing generated. */
    public static FencingAotDecisions recorded(String text) {
        return new FencingAotDecisions(parse(text));
    }

    /** Each decision of the build, by the properties it was read from. */
    Map<String, String> decisions() {
        return decisions;
    }

    /** Each decision, by the properties it is read from, in a fixed order. */
    static Map<String, String> of(Environment environment) {
        Binder binder = Binder.get(environment);
        Map<String, String> decisions = new LinkedHashMap<>();
        decisions.put("fencing.enabled", flag(environment, "fencing.enabled", true));
        decisions.put(OnFencingTypeCondition.STORE_TYPE, type(binder, OnFencingTypeCondition.STORE_TYPE,
                FencingProperties.StoreType.class, FencingProperties.StoreType.JDBC));
        decisions.put(OnFencingTypeCondition.ISSUER_TYPE, type(binder, OnFencingTypeCondition.ISSUER_TYPE,
                FencingProperties.IssuerType.class, FencingProperties.IssuerType.NONE));
        decisions.put(SIGNING,
                FencingSigningAutoConfiguration.SigningConfigured.configured(environment) ? "set" : "not set");
        decisions.put(SIGNER,
                FencingSigningAutoConfiguration.SignerConfigured.signs(environment) ? "set" : "not set");
        decisions.put(IssuerOffsetPostProcessor.PREFIX + ".base",
                binder.bind(IssuerOffsetPostProcessor.PREFIX + ".base", String.class).isBound() ? "set" : "not set");
        decisions.put(FencingWebAutoConfiguration.URL_PATTERNS,
                listed(binder, FencingWebAutoConfiguration.URL_PATTERNS));
        decisions.put(FencingWebFluxAutoConfiguration.PATH_PATTERNS,
                listed(binder, FencingWebFluxAutoConfiguration.PATH_PATTERNS));
        decisions.put(FencingRestClientAutoConfiguration.PROPAGATE_TO,
                listed(binder, FencingRestClientAutoConfiguration.PROPAGATE_TO));
        decisions.put("fencing.compaction.enabled", flag(environment, "fencing.compaction.enabled", false));
        decisions.put("fencing.admin.enabled", flag(environment, "fencing.admin.enabled", false));
        return decisions;
    }

    /** One {@code decision=value} line per decision, escaped as a properties file. */
    static String text(Map<String, String> decisions) {
        StringBuilder text = new StringBuilder();
        decisions.forEach((decision, value) -> text.append(escape(decision)).append('=').append(value).append('\n'));
        return text.toString();
    }

    static Map<String, String> parse(String text) {
        Properties properties = new Properties();
        try {
            properties.load(new StringReader(text));
        } catch (IOException impossible) {
            throw new IllegalStateException(impossible);
        }
        Map<String, String> decisions = new LinkedHashMap<>();
        properties.stringPropertyNames().forEach(name -> decisions.put(name, properties.getProperty(name)));
        return decisions;
    }

    /**
     * Each decision taken one way at build time and another now: {@code "decision: built with X, runs with Y"}, in
     * the order of {@link #of}; a decision the build did not record (a newer library) is not compared.
     */
    static List<String> differences(Map<String, String> built, Map<String, String> now) {
        return differences(built, now, decision -> null);
    }

    /**
     * As {@link #differences(Map, Map)}, each run's value followed by where it was set when {@code origin} knows
     * ({@code null}: not said).
     */
    static List<String> differences(Map<String, String> built, Map<String, String> now,
                                    java.util.function.Function<String, String> origin) {
        List<String> differences = new ArrayList<>();
        now.forEach((decision, value) -> {
            String then = built.get(decision);
            if (then != null && !Objects.equals(then, value)) {
                String from = origin.apply(decision);
                differences.add(decision + ": built with " + then + ", runs with " + value
                        + (from == null ? "" : " (set in " + from + ")"));
            }
        });
        return differences;
    }

    /**
     * A switch as the starter's {@code @ConditionalOnBooleanProperty} reads it: {@code true} or {@code false} in any
     * case; any other text ({@code on}, {@code yes}) is neither, and is recorded as written.
     */
    private static String flag(Environment environment, String name, boolean otherwise) {
        String value = environment.getProperty(name);
        if (value == null) {
            return Boolean.toString(otherwise);
        }
        // not trimmed: the condition compares the text as it is, so 'true ' turns the switch neither on nor off
        String text = value.toLowerCase(java.util.Locale.ROOT);
        return text.equals("true") || text.equals("false") ? text : "'" + value + "' (neither true nor false)";
    }

    private static <E extends Enum<E>> String type(Binder binder, String name, Class<E> type, E otherwise) {
        try {
            return binder.bind(name, type).orElse(otherwise).name().toLowerCase(java.util.Locale.ROOT)
                    .replace('_', '-');
        } catch (BindException unbindable) {
            return "'" + binder.bind(name, String.class).orElse("") + "' (not a valid value)";
        }
    }

    private static String listed(Binder binder, String name) {
        return binder.bind(name, Bindable.listOf(String.class)).orElse(List.of()).isEmpty() ? "not set" : "set";
    }

    private static String escape(String key) {
        return key.replace("\\", "\\\\").replace(" ", "\\ ").replace("=", "\\=").replace(":", "\\:");
    }
}
