package org.streamplace.storm;

import java.io.IOException;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import javax.security.auth.Subject;
import org.apache.storm.Config;
import org.apache.storm.blobstore.AtomicOutputStream;
import org.apache.storm.blobstore.BlobStore;
import org.apache.storm.blobstore.InputStreamWithMeta;
import org.apache.storm.blobstore.LocalFsBlobStore;
import org.apache.storm.generated.AuthorizationException;
import org.apache.storm.generated.KeyAlreadyExistsException;
import org.apache.storm.generated.KeyNotFoundException;
import org.apache.storm.generated.ReadableBlobMeta;
import org.apache.storm.generated.SettableBlobMeta;
import org.apache.storm.nimbus.ILeaderElector;
import org.apache.storm.nimbus.NimbusInfo;

/**
 * The blob store the embedded runner's supervisors read topologies from: one {@link
 * LocalFsBlobStore} on Nimbus' blob directory, opened once and shared by every supervisor of the
 * JVM (set as their {@code nimbus.blobstore.class}; Nimbus keeps its own).
 *
 * <p>In local mode Storm opens a blob store for every request a supervisor makes ({@code
 * ServerUtils.getClientBlobStoreForSupervisor}: a {@code LocalModeClientBlobStore} over a new
 * {@code LocalFsBlobStore}, closed after the request): for every topology a supervisor gets, one to
 * read the blob store's update time (which local mode does not keep: -1) and one for each of its
 * three blobs ({@code AsyncLocalizer.downloadOrUpdate}), and one every {@code
 * supervisor.localizer.cache.cleanup.interval.ms}. Each opening starts two ZooKeeper sessions,
 * creates Storm's ZooKeeper paths and schedules a full cleanup of the blob directory at once, and
 * each closing ends the sessions. In the plans-on-Storm test's JVM (35 jobs, 30 supervisors), in a
 * 5-s sample while jobs started, the in-process ZooKeeper server's threads took 47 % of the JVM's
 * CPU, and most of the ZooKeeper calls in a stack sample were these openings and closings; one
 * store serves the same reads with one pair of sessions (the test: 37-42 CPU s in three runs
 * before, 31 after, 2026-12-01).
 *
 * <p>The shared store never cleans the directory up ({@code blobstore.cleanup.enable} false): Nimbus'
 * own store does. A supervisor's store's cleanup deleting the key directory Nimbus has just created
 * for a new topology is the race {@link LocalRunner} submits once more for. {@link #shutdown} does
 * nothing: the store lives as long as the JVM, which the runner halts when its jobs are done.
 */
public final class SupervisorBlobStore extends BlobStore {
    private static BlobStore shared;

    private BlobStore store;

    /** Storm makes it by reflection (a public constructor without arguments). */
    public SupervisorBlobStore() {
    }

    private static synchronized BlobStore shared(Map<String, Object> conf, String baseDir, NimbusInfo nimbusInfo,
                                                 ILeaderElector leaderElector) {
        if (shared == null) {
            Map<String, Object> readOnly = new HashMap<>(conf);
            readOnly.put(Config.BLOBSTORE_CLEANUP_ENABLE, false);
            LocalFsBlobStore local = new LocalFsBlobStore();
            local.prepare(readOnly, baseDir, nimbusInfo, leaderElector);
            shared = local;
        }
        return shared;
    }

    @Override
    public void prepare(Map<String, Object> conf, String baseDir, NimbusInfo nimbusInfo, ILeaderElector leaderElector) {
        store = shared(conf, baseDir, nimbusInfo, leaderElector);
    }

    @Override
    public AtomicOutputStream createBlob(String key, SettableBlobMeta meta, Subject who)
            throws AuthorizationException, KeyAlreadyExistsException {
        return store.createBlob(key, meta, who);
    }

    @Override
    public AtomicOutputStream updateBlob(String key, Subject who) throws AuthorizationException, KeyNotFoundException {
        return store.updateBlob(key, who);
    }

    @Override
    public ReadableBlobMeta getBlobMeta(String key, Subject who) throws AuthorizationException, KeyNotFoundException {
        return store.getBlobMeta(key, who);
    }

    @Override
    public void setLeaderElector(ILeaderElector leaderElector) {
        store.setLeaderElector(leaderElector);
    }

    @Override
    public void setBlobMeta(String key, SettableBlobMeta meta, Subject who) throws AuthorizationException, KeyNotFoundException {
        store.setBlobMeta(key, meta, who);
    }

    @Override
    public void deleteBlob(String key, Subject who) throws AuthorizationException, KeyNotFoundException {
        store.deleteBlob(key, who);
    }

    @Override
    public InputStreamWithMeta getBlob(String key, Subject who) throws AuthorizationException, KeyNotFoundException {
        return store.getBlob(key, who);
    }

    @Override
    public Iterator<String> listKeys() {
        return store.listKeys();
    }

    @Override
    public int getBlobReplication(String key, Subject who) throws Exception {
        return store.getBlobReplication(key, who);
    }

    @Override
    public int updateBlobReplication(String key, int replication, Subject who)
            throws AuthorizationException, KeyNotFoundException, IOException {
        return store.updateBlobReplication(key, replication, who);
    }

    @Override
    public void shutdown() {
        // shared by every supervisor of the JVM: it lives as long as the JVM
    }
}
