package dev.fencing.boot.autoconfigure;

import dev.fencing.signing.SignatureScheme;
import org.springframework.boot.context.properties.ConfigurationProperties;

import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The fencing.* properties of the Spring Boot auto-configuration. Every property has a default that is safe:
 * fencing is on, the store is the database's (never a silent in-memory one), no issuer, and no token is accepted from
 * HTTP callers until fencing.web.filter.url-patterns names where.
 */
@ConfigurationProperties(prefix = "fencing")
public class FencingProperties {

    static final String ETCD_ENDPOINTS = "fencing.issuer.etcd.endpoints";

    /**
     * Whether fencing is on: @Fenced methods are advised and checked at startup. Off, they run unchecked.
     */
    private boolean enabled = true;

    /** How long @Fenced(acquire = true) waits for a lock before failing. */
    private Duration acquireTimeout = Duration.ofSeconds(10);

    /**
     * The mode of the checks of every resource without one in fencing.modes: enforce (the default: a missing, forged
     * or stale token is refused) or observe (it is counted with enforced=false, logged, and the call runs; for rolling
     * fencing out). Switchable without a restart by POST /actuator/fencing.
     */
    private String mode = "enforce";

    /**
     * The mode of each declared resource (@Fenced(resource = ...)): fencing.modes.accounts=observe. Unknown values
     * fail startup naming the property.
     */
    private Map<String, String> modes = new LinkedHashMap<>();

    /**
     * Write methods of Spring Data repositories that are deliberately unfenced, as Repository.method (every overload
     * of that name) or Repository (all its methods): a repository with @Fenced methods and unfenced save, delete,
     * remove, insert, update, upsert, persist, merge, flush, @Modifying, @Procedure or writing @Query methods is named
     * in a startup warning unless they are listed here. An entry naming another method of such a repository fails
     * startup.
     */
    private List<String> allowedUnfencedWrites = new ArrayList<>();

    private final Store store = new Store();

    private final Issuer issuer = new Issuer();

    private final Web web = new Web();

    private final Actuator actuator = new Actuator();
    private final Admin admin = new Admin();

    private final Signing signing = new Signing();

    private final Kotlin kotlin = new Kotlin();

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public Duration getAcquireTimeout() {
        return acquireTimeout;
    }

    public void setAcquireTimeout(Duration acquireTimeout) {
        if (acquireTimeout != null && acquireTimeout.isNegative()) {
            throw new IllegalArgumentException("fencing.acquire-timeout must not be negative, was " + acquireTimeout);
        }
        this.acquireTimeout = acquireTimeout;
    }

    public String getMode() {
        return mode;
    }

    public void setMode(String mode) {
        this.mode = mode;
    }

    public Map<String, String> getModes() {
        return modes;
    }

    public void setModes(Map<String, String> modes) {
        this.modes = modes;
    }

    public List<String> getAllowedUnfencedWrites() {
        return allowedUnfencedWrites;
    }

    public void setAllowedUnfencedWrites(List<String> allowedUnfencedWrites) {
        this.allowedUnfencedWrites = allowedUnfencedWrites;
    }

    public Store getStore() {
        return store;
    }

    public Issuer getIssuer() {
        return issuer;
    }

    public Web getWeb() {
        return web;
    }

    public Actuator getActuator() {
        return actuator;
    }

    public Admin getAdmin() {
        return admin;
    }

    public Kotlin getKotlin() {
        return kotlin;
    }

    /** Kotlin coroutines. */
    public static class Kotlin {

        /**
         * Whether the application may have @Scheduled suspend functions. Spring runs them on Dispatchers.Unconfined
         * with no fencing context of their own, so a fenced call made directly in one after it resumed inside other
         * fenced work is checked with that work's token: startup fails while this is false (the default). Set it
         * once their fenced calls run inside withContext(Dispatchers.IO), or when they make none.
         */
        private boolean allowScheduledSuspendFunctions = false;

        public boolean isAllowScheduledSuspendFunctions() {
            return allowScheduledSuspendFunctions;
        }

        public void setAllowScheduledSuspendFunctions(boolean allowScheduledSuspendFunctions) {
            this.allowScheduledSuspendFunctions = allowScheduledSuspendFunctions;
        }
    }

    /** Administration of max_seen over the actuator endpoint. */
    public static class Admin {

        /**
         * Whether /actuator/fencing/{resource} accepts POST, lowering the resource's max_seen to the issuer's highest
         * issued token after a bad token (off by default; secure the endpoint before turning it on).
         */
        private boolean enabled = false;

        /**
         * Whether the admin operations may start without Spring Security on the class path (off: startup fails),
         * for a management port protected another way (bound to localhost, behind an authenticating gateway).
         */
        private boolean allowUnsecured = false;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public boolean isAllowUnsecured() {
            return allowUnsecured;
        }

        public void setAllowUnsecured(boolean allowUnsecured) {
            this.allowUnsecured = allowUnsecured;
        }
    }

    public Signing getSigning() {
        return signing;
    }

    /**
     * Signed tokens: with keys configured, every fenced check verifies the token's signature before the store sees
     * it, the Fencing-Token filter refuses unsigned or badly signed headers, and an issuer holding the current key's
     * secret or private key signs the tokens it hands out. Off (no keys) by default.
     */
    public static class Signing {

        /**
         * The signature scheme of every key: hmac-sha256 (one shared secret signs and verifies) or ed25519 (the
         * private key signs on issuers, resources hold only the public key). Required when keys are set.
         */
        private SignatureScheme scheme;

        /**
         * The id of the key issuers sign with. Must name a key that is not retired; the key's secret (hmac-sha256)
         * or private-key (ed25519) makes this application sign. Not needed on resources that only verify.
         */
        private String currentKeyId;

        /**
         * The keys by id (1 to 64 characters of A-Z a-z 0-9 _ -): keys.ID.secret, the HMAC secret in Base64 (at
         * least 256 bits); keys.ID.public-key and keys.ID.private-key, Ed25519 keys as PEM or Base64 (the private
         * key on issuers only); keys.ID.retired=true refuses the tokens signed with that key.
         */
        private Map<String, Key> keys = new LinkedHashMap<>();

        public SignatureScheme getScheme() {
            return scheme;
        }

        public void setScheme(SignatureScheme scheme) {
            this.scheme = scheme;
        }

        public String getCurrentKeyId() {
            return currentKeyId;
        }

        public void setCurrentKeyId(String currentKeyId) {
            this.currentKeyId = currentKeyId;
        }

        public Map<String, Key> getKeys() {
            return keys;
        }

        public void setKeys(Map<String, Key> keys) {
            this.keys = keys;
        }
    }

    /** One signing key (fencing.signing.keys.ID.*); its toString never shows key material. */
    public static class Key {

        /** The HMAC-SHA256 secret, Base64 (at least 32 bytes: openssl rand -base64 32). */
        private String secret;

        /** The Ed25519 public key: a PEM PUBLIC KEY block, its Base64, or the Base64 of the raw 32 bytes. */
        private String publicKey;

        /** The Ed25519 private key, on issuers only: a PEM PRIVATE KEY block (PKCS#8) or its Base64. */
        private String privateKey;

        /** Whether tokens signed with this key are refused (after rotation, once no lease can still hold one). */
        private boolean retired;

        public String getSecret() {
            return secret;
        }

        public void setSecret(String secret) {
            this.secret = secret;
        }

        public String getPublicKey() {
            return publicKey;
        }

        public void setPublicKey(String publicKey) {
            this.publicKey = publicKey;
        }

        public String getPrivateKey() {
            return privateKey;
        }

        public void setPrivateKey(String privateKey) {
            this.privateKey = privateKey;
        }

        public boolean isRetired() {
            return retired;
        }

        public void setRetired(boolean retired) {
            this.retired = retired;
        }

        @Override
        public String toString() {
            return "Key[secret=" + (secret == null ? "none" : "set") + ", public-key=" + (publicKey == null ? "none"
                    : "set") + ", private-key=" + (privateKey == null ? "none" : "set") + ", retired=" + retired + "]";
        }
    }

    /** The actuator endpoint (/actuator/fencing). */
    public static class Actuator {

        /** Whether the endpoint's recent rejections show the presented token's holder id (hidden by default). */
        private boolean showHolders = false;

        public boolean isShowHolders() {
            return showHolders;
        }

        public void setShowHolders(boolean showHolders) {
            this.showHolders = showHolders;
        }
    }

    /** Where tokens are checked. */
    public static class Store {

        /**
         * Which store: jdbc (default: the database, a JdbcFenceStore on the DataSource with fencing-jdbc and, for
         * reactive @Fenced methods, an R2dbcFenceStore on the R2DBC ConnectionFactory with fencing-r2dbc) or
         * in-memory (tests and demos in one JVM only: a second instance of the application is not fenced).
         */
        private StoreType type = StoreType.JDBC;

        private final JdbcStore jdbc = new JdbcStore();

        private final R2dbcStore r2dbc = new R2dbcStore();

        private final InMemoryStore inMemory = new InMemoryStore();

        public StoreType getType() {
            return type;
        }

        public void setType(StoreType type) {
            this.type = type;
        }

        public JdbcStore getJdbc() {
            return jdbc;
        }

        public R2dbcStore getR2dbc() {
            return r2dbc;
        }

        public InMemoryStore getInMemory() {
            return inMemory;
        }
    }

    /** The in-memory store (fencing.store.type=in-memory, or an InMemoryFenceStore bean of the application's). */
    public static class InMemoryStore {

        /**
         * Whether this application runs as one instance only. An in-memory store beside an issuer whose lock
         * service other processes share (jdbc, zookeeper, etcd, Redisson, Hazelcast) fails startup unless this is
         * true: each instance would check writes against its own max_seen, so another instance's zombie would write.
         */
        private boolean singleInstance;

        public boolean isSingleInstance() {
            return singleInstance;
        }

        public void setSingleInstance(boolean singleInstance) {
            this.singleInstance = singleInstance;
        }
    }

    /** The reactive database store (fencing-r2dbc), for @Fenced methods returning a Mono or Flux. */
    public static class R2dbcStore {

        /**
         * The fence table (max_seen per resource); unless set, fencing.store.jdbc.table's, so both stacks share
         * max_seen (an application with both stores fails startup when they differ).
         */
        private String table = "fencing_max_seen";

        /**
         * How long a check waits for a fence row another transaction holds before failing as busy (a transient
         * failure: 503 with Retry-After over HTTP).
         */
        private Duration lockTimeout = Duration.ofSeconds(5);

        public String getTable() {
            return table;
        }

        public void setTable(String table) {
            this.table = TableNames.require("fencing.store.r2dbc.table", table);
        }

        public Duration getLockTimeout() {
            return lockTimeout;
        }

        public void setLockTimeout(Duration lockTimeout) {
            this.lockTimeout = positiveLockTimeout("fencing.store.r2dbc.lock-timeout", lockTimeout);
        }
    }

    /** The database store. */
    public static class JdbcStore {

        /** The fence table (max_seen per resource). */
        private String table = "fencing_max_seen";

        /**
         * When the starter creates the fence table if it is missing, from the script shipped in fencing-jdbc:
         * embedded (only on an in-memory database), always or never (your migrations own it).
         * Runs after spring.sql.init, Flyway and Liquibase, so a table they create is left as it is.
         */
        private SchemaInitialization initializeSchema = SchemaInitialization.EMBEDDED;

        /** How long a check waits for a fence row another transaction holds before failing as busy. */
        private Duration lockTimeout = Duration.ofSeconds(5);

        /**
         * How far one token may move a resource's max_seen; a token further above is refused as out-of-range. Off
         * when unset. Size it from the issuer's write rate (not for ZooKeeper or etcd without care: their tokens jump
         * by every write of the ensemble).
         */
        private Long maxAdvance;

        /**
         * PostgreSQL only (checked at startup): send each check in the network round trip of the transaction's
         * COMMIT instead of one of its own before the method body. The body then runs before the verdict: its effects
         * outside the database
         * (HTTP calls, messages, files) happen even for a stale token; only the transaction's database writes are
         * fenced. Needs JDBC transactions (not JPA). See docs/stores.md.
         */
        private boolean checkAtCommit;

        public boolean isCheckAtCommit() {
            return checkAtCommit;
        }

        public void setCheckAtCommit(boolean checkAtCommit) {
            this.checkAtCommit = checkAtCommit;
        }

        public Long getMaxAdvance() {
            return maxAdvance;
        }

        public void setMaxAdvance(Long maxAdvance) {
            this.maxAdvance = maxAdvance;
        }

        public String getTable() {
            return table;
        }

        public void setTable(String table) {
            this.table = TableNames.require("fencing.store.jdbc.table", table);
        }

        public SchemaInitialization getInitializeSchema() {
            return initializeSchema;
        }

        public void setInitializeSchema(SchemaInitialization initializeSchema) {
            this.initializeSchema = initializeSchema;
        }

        public Duration getLockTimeout() {
            return lockTimeout;
        }

        public void setLockTimeout(Duration lockTimeout) {
            this.lockTimeout = positiveLockTimeout("fencing.store.jdbc.lock-timeout", lockTimeout);
        }
    }

    /** Which fence store the auto-configuration defines. */
    public enum StoreType {
        /**
         * The database: a JdbcFenceStore on the application's DataSource and transaction manager, and an
         * R2dbcFenceStore on its R2DBC ConnectionFactory.
         */
        JDBC,
        /** An InMemoryFenceStore (and an InMemoryReactiveFenceStore): fences one JVM only, for tests and demos. */
        IN_MEMORY
    }

    /** Who hands out tokens for @Fenced(acquire = true). */
    public static class Issuer {

        /**
         * Which issuer: none (default: no acquiring fence points), jdbc (a lease table),
         * zookeeper (Curator locks) or etcd (etcd locks).
         */
        private IssuerType type = IssuerType.NONE;

        private final JdbcIssuer jdbc = new JdbcIssuer();

        private final ZooKeeperIssuer zookeeper = new ZooKeeperIssuer();

        private final EtcdIssuer etcd = new EtcdIssuer();

        private final Offset offset = new Offset();

        /**
         * Whether startup fails when a one-sequence issuer's counter (ZooKeeper's zxid, etcd's revision, plus any
         * offset base) is below the fence store's highest max_seen: every write to that resource would be refused as
         * stale, as after a move to a new issuer without fencing.issuer.offset.base. The message names the offsets
         * stored for earlier moves. Turn it off only for a fence table shared with another application whose issuer
         * counts higher: off, the finding is only a warning in the log, and a forgotten offset shows as every write
         * refused as stale.
         */
        private boolean checkFenceStore = true;

        public Offset getOffset() {
            return offset;
        }

        public boolean isCheckFenceStore() {
            return checkFenceStore;
        }

        public void setCheckFenceStore(boolean checkFenceStore) {
            this.checkFenceStore = checkFenceStore;
        }

        public IssuerType getType() {
            return type;
        }

        public void setType(IssuerType type) {
            this.type = type;
        }

        public JdbcIssuer getJdbc() {
            return jdbc;
        }

        public ZooKeeperIssuer getZookeeper() {
            return zookeeper;
        }

        public EtcdIssuer getEtcd() {
            return etcd;
        }
    }

    /**
     * The offset of a migration to another issuer: every token of the application's TokenIssuer bean plus
     * {@code base}, stored durably under {@code name} (see docs/issuers.md, "Moving to another issuer").
     */
    public static class Offset {

        /**
         * Added to every token of the TokenIssuer bean; positive, above every token the previous issuer issued. Unset
         * (default): no offset. Must equal the base stored under the name once one is.
         */
        private Long base;

        /** The migration's name: the key its base is stored under (one row of the issuer base table). */
        private String name = "default";

        /** The issuer base table (fencing-jdbc's JdbcIssuerBase), unless the application has an IssuerBase bean. */
        private String table = "fencing_issuer_base";

        /**
         * Whether the first start of a migration also checks that its base is above the fence store's highest
         * max_seen and the highest token of a JDBC lease table on the DataSource other than the new issuer's
         * (fencing.issuer.jdbc.table, fencing_lease by default: the previous issuer's, whose tokens may not all have
         * been presented yet), before storing it (fencing.issuer.check-fence-store compares the counter plus the
         * base).
         */
        private boolean checkFenceStore = true;

        /**
         * When the starter creates the issuer base table if it is missing, from the script shipped in fencing-jdbc:
         * never (your migrations own it), embedded (default: only on an in-memory database, as for the fence and
         * lease tables) or always. Runs after spring.sql.init, Flyway and Liquibase, so a table they create is left
         * as it is.
         */
        private SchemaInitialization initializeSchema = SchemaInitialization.EMBEDDED;

        public SchemaInitialization getInitializeSchema() {
            return initializeSchema;
        }

        public void setInitializeSchema(SchemaInitialization initializeSchema) {
            this.initializeSchema = initializeSchema;
        }

        public Long getBase() {
            return base;
        }

        public void setBase(Long base) {
            this.base = base;
        }

        public String getName() {
            return name;
        }

        public void setName(String name) {
            this.name = name;
        }

        public String getTable() {
            return table;
        }

        public void setTable(String table) {
            this.table = TableNames.require("fencing.issuer.offset.table", table);
        }

        public boolean isCheckFenceStore() {
            return checkFenceStore;
        }

        public void setCheckFenceStore(boolean checkFenceStore) {
            this.checkFenceStore = checkFenceStore;
        }
    }

    /** The etcd issuer (fencing-etcd): tokens are the lock keys' creation revisions. */
    public static class EtcdIssuer {

        /**
         * The etcd endpoints, e.g. http://etcd1:2379,http://etcd2:2379 (http only: for TLS, a jetcd Client bean). No
         * default: required unless the application has a jetcd Client bean, which is then used instead.
         */
        private List<String> endpoints = new ArrayList<>();

        /** The key prefix of the lock keys. */
        private String lockPrefix = "/fencing/locks/";

        /**
         * The time-to-live of the session lease, kept alive while the application runs: whole seconds, at least one
         * (etcd counts leases in seconds, and may raise a short one to its own minimum); a holder that cannot keep it
         * alive that long loses its locks.
         */
        private Duration leaseTtl = Duration.ofSeconds(10);

        public List<String> getEndpoints() {
            return endpoints;
        }

        /**
         * Refuses, naming the property, an endpoint that is not a URL with a scheme and a host
         * ({@code http://etcd1:2379}): jetcd would fail on it with a bare {@code URISyntaxException}; and one whose
         * scheme is not {@code http}: jetcd ignores the scheme, so the starter's client, which has no TLS settings,
         * would talk plaintext to an {@code https://} endpoint.
         */
        public void setEndpoints(List<String> endpoints) {
            for (String endpoint : endpoints) {
                String trimmed = endpoint == null ? "" : endpoint.trim();
                if (trimmed.isEmpty()) {
                    continue; // an empty entry (a trailing comma) is dropped where the client is built
                }
                URI uri;
                try {
                    uri = new URI(trimmed);
                } catch (URISyntaxException e) {
                    uri = null;
                }
                if (uri == null || uri.getScheme() == null || uri.getHost() == null) {
                    throw new IllegalArgumentException(ETCD_ENDPOINTS + " must list URLs with a scheme and a host, "
                            + "e.g. http://etcd1:2379,http://etcd2:2379; was '" + trimmed + "'");
                }
                if ("https".equalsIgnoreCase(uri.getScheme())) {
                    // jetcd ignores the scheme: without an SSL context its client talks plaintext to every endpoint
                    throw new IllegalArgumentException(ETCD_ENDPOINTS + " lists '" + trimmed + "', but the client "
                            + "the starter builds has no TLS settings and would talk plaintext to it (jetcd ignores "
                            + "the scheme): for TLS, define a jetcd Client bean built with an SSL context, which the "
                            + "issuer then uses (and remove this property); otherwise write http://");
                }
                if (!"http".equalsIgnoreCase(uri.getScheme())) {
                    throw new IllegalArgumentException(ETCD_ENDPOINTS + " must list http:// URLs, e.g. "
                            + "http://etcd1:2379,http://etcd2:2379; was '" + trimmed + "'");
                }
            }
            this.endpoints = endpoints;
        }

        public String getLockPrefix() {
            return lockPrefix;
        }

        public void setLockPrefix(String lockPrefix) {
            this.lockPrefix = lockPrefix;
        }

        public Duration getLeaseTtl() {
            return leaseTtl;
        }

        /** Refuses, naming the property, a TTL below one second or with a fraction of a second. */
        public void setLeaseTtl(Duration leaseTtl) {
            if (leaseTtl == null || leaseTtl.toSeconds() < 1 || leaseTtl.toNanosPart() != 0) {
                throw new IllegalArgumentException("fencing.issuer.etcd.lease-ttl must be a whole number of seconds, "
                        + "at least 1s (etcd counts leases in seconds), was " + leaseTtl);
            }
            this.leaseTtl = leaseTtl;
        }
    }

    /** The ZooKeeper issuer (fencing-zookeeper): tokens are the lock nodes' creation zxids. */
    public static class ZooKeeperIssuer {

        /**
         * The ZooKeeper ensemble, e.g. zk1:2181,zk2:2181,zk3:2181. No default: required unless the
         * application has a (started) CuratorFramework bean, which is then used instead.
         */
        private String connectString;

        /** The parent path of the lock nodes. */
        private String lockPath = "/fencing/locks";

        /**
         * The ZooKeeper session timeout of the Curator client the starter creates (the server bounds it, to 20 ticks
         * unless set otherwise: a WARN names both when it granted less); when the session ends, the lock nodes go
         * with it and leases held are marked lost.
         */
        private Duration sessionTimeout = Duration.ofSeconds(60);

        public String getConnectString() {
            return connectString;
        }

        public void setConnectString(String connectString) {
            this.connectString = connectString;
        }

        public String getLockPath() {
            return lockPath;
        }

        public void setLockPath(String lockPath) {
            if (lockPath == null || !lockPath.startsWith("/") || lockPath.contains("//")
                    || lockPath.length() > 1 && lockPath.endsWith("/") || !lockPath.strip().equals(lockPath)
                    || (lockPath + "/").contains("/./") || (lockPath + "/").contains("/../")) {
                // a trailing space made a second lock tree: instances configured apart did not exclude each other
                throw new IllegalArgumentException("fencing.issuer.zookeeper.lock-path must be an absolute ZooKeeper "
                        + "path, starting with '/', with no empty, '.' or '..' segment, no trailing '/' and no "
                        + "spaces around it (such as /fencing/locks), was '" + lockPath + "'");
            }
            this.lockPath = lockPath;
        }

        public Duration getSessionTimeout() {
            return sessionTimeout;
        }

        public void setSessionTimeout(Duration sessionTimeout) {
            if (sessionTimeout == null || sessionTimeout.compareTo(Duration.ofSeconds(1)) < 0) {
                // zero looped Curator on "session timeout has elapsed" and every acquire said "not reachable"
                throw new IllegalArgumentException("fencing.issuer.zookeeper.session-timeout must be at least 1s "
                        + "(ZooKeeper servers allow 2 to 20 ticks, 4s to 40s by default), was " + sessionTimeout);
            }
            this.sessionTimeout = sessionTimeout;
        }
    }

    /** The database issuer. */
    public static class JdbcIssuer {

        /** The lease table (one lease and counter per resource). */
        private String table = "fencing_lease";

        /**
         * When the starter creates the lease table if it is missing, from the script shipped in fencing-jdbc:
         * embedded (only on an in-memory database), always or never (your migrations own it).
         * Runs after spring.sql.init, Flyway and Liquibase, so a table they create is left as it is.
         */
        private SchemaInitialization initializeSchema = SchemaInitialization.EMBEDDED;

        /** How long a lease lasts; there is no keep-alive, so choose it longer than the critical section. */
        private Duration leaseTime = Duration.ofSeconds(30);

        public String getTable() {
            return table;
        }

        public void setTable(String table) {
            this.table = TableNames.require("fencing.issuer.jdbc.table", table);
        }

        public SchemaInitialization getInitializeSchema() {
            return initializeSchema;
        }

        public void setInitializeSchema(SchemaInitialization initializeSchema) {
            this.initializeSchema = initializeSchema;
        }

        public Duration getLeaseTime() {
            return leaseTime;
        }

        public void setLeaseTime(Duration leaseTime) {
            this.leaseTime = leaseTime;
        }
    }

    /**
     * When the starter creates a missing fencing table: the semantics of Spring Boot's
     * DatabaseInitializationMode (spring.sql.init.mode). It creates a table only when it is missing
     * (CREATE TABLE IF NOT EXISTS) and never alters one; the startup check still verifies what it finds.
     */
    public enum SchemaInitialization {
        /** Only when the DataSource is an embedded, in-memory database (H2, HSQLDB, Derby). */
        EMBEDDED,
        /** On every database. */
        ALWAYS,
        /** Never: the application's schema scripts or migrations create the table. */
        NEVER
    }

    /** Which token issuer the auto-configuration defines. */
    public enum IssuerType {
        /** None: only fence points that check a caller's token work. */
        NONE,
        /** A JdbcTokenIssuer on the application's DataSource. */
        JDBC,
        /** A ZooKeeperTokenIssuer (fencing-zookeeper), on a CuratorFramework bean or its own. */
        ZOOKEEPER,
        /** An EtcdTokenIssuer (fencing-etcd), on a jetcd Client bean or its own. */
        ETCD
    }

    /** Tokens over HTTP. */
    public static class Web {

        private final Filter filter = new Filter();

        private final Client client = new Client();

        private final Reactive reactive = new Reactive();

        public Filter getFilter() {
            return filter;
        }

        public Reactive getReactive() {
            return reactive;
        }

        public Client getClient() {
            return client;
        }
    }

    /** The WebFlux filter that binds the tokens callers send in the Fencing-Token header into the Reactor Context. */
    public static class Reactive {

        /**
         * The path patterns (Spring's PathPattern syntax) of the internal endpoints where callers' tokens are
         * accepted, e.g. /internal/**. No default: accepting tokens from callers is a trust decision, so without
         * patterns there is no filter; a pattern matching every path fails startup. Unlike a servlet pattern,
         * /internal/* matches one path segment only (a warning at startup says so).
         */
        private List<String> pathPatterns = new ArrayList<>();

        public List<String> getPathPatterns() {
            return pathPatterns;
        }

        public void setPathPatterns(List<String> pathPatterns) {
            this.pathPatterns = pathPatterns;
        }
    }

    /** The RestClient interceptor that sends the bound tokens in the Fencing-Token header. */
    public static class Client {

        /**
         * The hosts the application's RestClients and WebClients send the bound tokens to, e.g.
         * ledger.internal (any port) or billing:8443 (that port only); an entry with a scheme, a path, a query or
         * user-info, or a blank one, fails startup. No default: tokens are sent only to services that check them,
         * so without hosts no interceptor or filter function is added.
         */
        private List<String> propagateTo = new ArrayList<>();

        public List<String> getPropagateTo() {
            return propagateTo;
        }

        public void setPropagateTo(List<String> propagateTo) {
            this.propagateTo = propagateTo;
        }
    }

    /** The filter that binds the tokens callers send in the Fencing-Token header. */
    public static class Filter {

        /**
         * The URL patterns where callers' tokens are accepted, e.g. /internal/*. No default: accepting tokens
         * from callers is a trust decision, so without patterns there is no filter.
         */
        private List<String> urlPatterns = new ArrayList<>();

        public List<String> getUrlPatterns() {
            return urlPatterns;
        }

        public void setUrlPatterns(List<String> urlPatterns) {
            this.urlPatterns = urlPatterns;
        }
    }

    /**
     * A store's lock wait bound as bound from a property: refused below 1 ms, so that the binding failure names the
     * property (a bound of 0 would mean "wait for ever" to some databases, "never wait" to others).
     */
    static Duration positiveLockTimeout(String property, Duration lockTimeout) {
        if (lockTimeout == null || lockTimeout.toMillis() < 1) {
            throw new IllegalArgumentException(property + " must be at least 1ms, was " + lockTimeout);
        }
        return lockTimeout;
    }
}
