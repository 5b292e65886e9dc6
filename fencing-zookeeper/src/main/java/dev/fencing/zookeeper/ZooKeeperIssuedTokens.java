package dev.fencing.zookeeper;

import dev.fencing.recovery.IssuedTokens;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * What a {@link ZooKeeperTokenIssuer} issued, for recovery. Tokens are czxids, which every write of the ensemble
 * advances, so the bound is the ensemble's zxid now: the czxid of a short-lived node created for the question (one
 * write) is above the czxid of every lock node created before it. A resource is held while its lock directory has a
 * lock node.
 */
final class ZooKeeperIssuedTokens implements IssuedTokens {

    /**
     * The probe node's name: {@code ~} never starts a lock directory's name ({@link ZooKeeperTokenIssuer#nodeName}).
     */
    static final String PROBE = "~zxid-";

    private final CuratorFramework client;
    private final String basePath;

    ZooKeeperIssuedTokens(CuratorFramework client, String basePath) {
        this.client = client;
        this.basePath = basePath;
    }

    @Override
    public long highestIssued(String resource) {
        try {
            Stat stat = new Stat();
            String probe = client.create().storingStatIn(stat).creatingParentContainersIfNeeded()
                    .withMode(CreateMode.EPHEMERAL_SEQUENTIAL).forPath(ZKPaths.makePath(basePath, PROBE));
            client.delete().guaranteed().forPath(probe);
            return stat.getCzxid();
        } catch (Exception e) {
            String connectString = client.getZookeeperClient().getCurrentConnectionString();
            throw new IllegalStateException("Could not read the current zxid of ZooKeeper at " + connectString
                    + " under '" + basePath + "' for resource '" + resource + "': " + e
                    + ZooKeeperTokenIssuer.chrootHint(e, connectString), e);
        }
    }

    @Override
    public boolean oneSequence() {
        return true;
    }

    @Override
    public boolean isHeld(String resource) {
        String directory = ZKPaths.makePath(basePath, ZooKeeperTokenIssuer.nodeName(resource));
        try {
            return !client.getChildren().forPath(directory).isEmpty();
        } catch (KeeperException.NoNodeException never) {
            return false;
        } catch (Exception e) {
            throw new IllegalStateException("Could not read the lock directory '" + directory + "' of resource '"
                    + resource + "' on ZooKeeper: " + e, e);
        }
    }
}
