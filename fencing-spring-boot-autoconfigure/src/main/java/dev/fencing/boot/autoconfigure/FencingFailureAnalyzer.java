package dev.fencing.boot.autoconfigure;

import dev.fencing.FencingConfigurationException;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Startup failures of fencing as Spring Boot reports them: for a {@link FencingConfigurationException} anywhere in
 * the cause chain, a Description (the exception's message, which names each method and what is wrong, and the bean
 * whose creation failed) and an Action (the fix), instead of a stack trace under whichever bean happened to trigger
 * the check. Registered in {@code META-INF/spring.factories}.
 */
public class FencingFailureAnalyzer extends AbstractFailureAnalyzer<FencingConfigurationException> {

    static final String DOCS = "Every startup failure of fencing and its fix: docs/startup-checks.md (and the README's "
            + "\"Spring Boot\" section).";

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, FencingConfigurationException cause) {
        String failed = failedBean(rootFailure);
        String bean = failed != null ? " (while creating bean '" + failed + "')" : "";
        String description = "Fencing refused to start" + bean + ":\n\n" + withoutBuilderAdvice(cause.getMessage());
        return new FailureAnalysis(description, action(cause.getMessage()), cause);
    }

    /**
     * The bean whose creation threw: the innermost named {@link BeanCreationException} of the cause chain, not the
     * outermost, which is whichever bean happened to depend on it first (the actuator endpoint on the issuer, say).
     */
    private static String failedBean(Throwable failure) {
        String name = null;
        for (Throwable t = failure; t != null && t != t.getCause(); t = t.getCause()) {
            if (t instanceof BeanCreationException creation && creation.getBeanName() != null) {
                name = creation.getBeanName();
            }
        }
        return name;
    }

    /**
     * {@code message} without the plain-Java advice to build the store or issuer with
     * {@code createTableIfMissing(true)}: the Action says which property creates the starter's table and when that
     * builder call applies, and both side by side read as two answers to one question.
     */
    static String withoutBuilderAdvice(String message) {
        return message == null ? null : BUILDER_ADVICE.matcher(message).replaceAll("");
    }

    private static final java.util.regex.Pattern BUILDER_ADVICE =
            java.util.regex.Pattern.compile(", or build the [a-z ]+ with createTableIfMissing\\(true\\)");

    /** The fix: the specific one for the failures the starter's properties solve, then where all are listed. */
    static String action(String message) {
        String text = message == null ? "" : message;
        StringBuilder action = new StringBuilder();
        if (text.contains("found no FenceStore")) {
            String blocking = text.contains("creates none while an R2DBC ConnectionFactory is defined")
                    ? "a DataSource bean of your own (DataSourceBuilder; Spring Boot creates none beside an R2DBC "
                    + "ConnectionFactory), with fencing-jdbc and the fence table fencing_max_seen or the one "
                    + "fencing.store.jdbc.table names, or a FenceStore bean of your own"
                    : "a database (spring.datasource.url, with fencing-jdbc and the fence table "
                    + "fencing_max_seen or the one fencing.store.jdbc.table names) or a FenceStore bean of your own";
            String reactive = "for methods returning a Mono or Flux, fencing-r2dbc and an R2DBC database "
                    + "(spring.r2dbc.url)";
            action.append("Give fencing a shared store: ")
                    .append(text.indexOf("fencing-r2dbc") < text.indexOf("For blocking")
                            ? reactive + "; for blocking ones, " + blocking : blocking + "; " + reactive)
                    .append(". For tests and demos in one JVM only: fencing.store.type=in-memory. To run @Fenced "
                            + "methods unchecked: fencing.enabled=false.\n");
        }
        if (text.contains("no ReactiveFenceStore bean")) {
            action.append("Give the reactive @Fenced methods a reactive store: an R2DBC database (spring.r2dbc.url, "
                    + "with fencing-r2dbc and the fence table fencing_max_seen or the one fencing.store.r2dbc.table "
                    + "names) or a ReactiveFenceStore bean of your own. For tests and demos in one JVM only: "
                    + "fencing.store.type=in-memory.\n");
        }
        if (text.contains("of R2dbcFenceStore does not exist")) {
            action.append("Create the fence table with your schema migrations (Flyway, Liquibase or spring.sql.init "
                    + "with spring.sql.init.schema-locations; the script the description names is the DDL to copy): "
                    + "the R2DBC store does not create it.\n");
        }
        if (text.contains("is set but no TokenIssuer bean exists")) {
            action.append("Add what the description names for the issuer type you set (its module, or the "
                    + "database), or remove fencing.issuer.type.\n");
        } else if (text.contains("acquire = true") && text.contains("TokenIssuer") && !text.contains("does not sign")) {
            action.append("Configure an issuer for @Fenced(acquire = true): fencing.issuer.type=jdbc (with the "
                    + "lease table), fencing.issuer.type=zookeeper (with fencing.issuer.zookeeper.connect-string), "
                    + "fencing.issuer.type=etcd (with fencing.issuer.etcd.endpoints) or a TokenIssuer bean of your "
                    + "own.\n");
        }
        if (text.contains("FencingTokenFilter") && text.contains("every path")) {
            action.append("Accepting callers' tokens is a trust decision: set fencing.web.filter.url-patterns to the "
                    + "paths only trusted callers reach, for example /internal/*.\n");
        }
        if (text.contains("createTableIfMissing(true)")) {
            String property = text.startsWith("Lease table") ? "fencing.issuer.jdbc.initialize-schema"
                    : "fencing.store.jdbc.initialize-schema";
            action.append("Create the table with your schema migrations (Flyway, Liquibase or spring.sql.init; the "
                    + "script the description names is the DDL to copy), or let the starter create it when it is "
                    + "missing: " + property + "=always (for the starter's own " + (text.startsWith("Lease table")
                    ? "issuer" : "store") + "; a " + (text.startsWith("Lease table") ? "JdbcTokenIssuer bean of your "
                    + "own" : "JdbcFenceStore bean of your own, one a RoutingFenceStore routes to included,")
                    + " creates it with its builder's createTableIfMissing(true)).\n");
        }
        boolean aot = text.contains("runs AOT-processed");
        if (aot && text.contains("recorded no fencing decisions")) {
            action.append("Run the AOT processing again (spring-boot:process-aot, in the build that packages the "
                    + "application) with this version of fencing on the class path, then start what it built.\n");
        } else if (aot) {
            action.append("Build the application with the fencing properties it runs with: where the AOT processing "
                    + "runs (application.properties, the profiles given to spring-boot:process-aot in the plugin's "
                    + "<profiles>, -Dspring-boot.aot.jvmArguments=-Dfencing...=..., or the build's environment), "
                    + "keeping secrets as placeholders resolved where it runs; or run it as built. A profile active "
                    + "at the build stays active when it runs.\n");
        } else if (text.contains("does not sign") && text.contains("no TokenSigner")) {
            action.append("Sign what this application acquires: set fencing.signing.current-key-id to a key of "
                    + "fencing.signing.keys with its secret (HMAC) or private-key (Ed25519), or declare a TokenSigner "
                    + "bean; this service's verifier refuses its own unsigned tokens otherwise.\n");
        } else if (text.contains("fencing.signing")) {
            action.append("Fix the fencing.signing property the description names (key material is never shown: "
                    + "check the value where it is configured). An HMAC secret is at least 32 bytes in Base64 "
                    + "(openssl rand -base64 32); "
                    + "Ed25519 keys are PEM or Base64 (openssl genpkey -algorithm ed25519).\n");
        } else if (text.contains("TokenSigner") || text.contains("TokenVerifier")) {
            action.append("Give the fence one TokenVerifier and at most one TokenSigner, with the same keys (with the "
                    + "starter: the fencing.signing.* properties), or sign the issuer's tokens.\n");
        }
        if (text.contains("checkAtCommit(true)")) {
            action.append("Checking at commit needs PostgreSQL (not MariaDB, where a statement that commits "
                    + "implicitly would commit the body's writes before the check) and JDBC transactions "
                    + "(JdbcTemplate or Spring Data JDBC with a "
                    + "DataSourceTransactionManager); otherwise leave fencing.store.jdbc.check-at-commit "
                    + "unset (false), and the check runs before the method body, on every database.\n");
        }
        if (text.contains(" with a key by ") || text.contains("differ in letter case only")
                || text.contains("look alike but are spelled with different characters")) {
            action.append("Check each resource one way in every method that checks it: keyed everywhere (a lock per "
                    + "entity) or nowhere (one lock for all of it), spelt the same way. A method that writes many "
                    + "entities holds an unkeyed @Fenced(acquire = true) lock and calls a keyed method per entity. "
                    + "Rename a resource only when its methods write other data than the keyed ones (a summary "
                    + "row): renaming the unkeyed method of the same data only hides the problem.\n");
        }
        if (action.isEmpty()) {
            action.append("Fix each problem the description names, as its line says (what is wrong, where, and what "
                    + "to change).\n");
        }
        return action.append(DOCS).toString();
    }
}
