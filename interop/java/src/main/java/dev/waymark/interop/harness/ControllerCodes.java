package dev.waymark.interop.harness;

/**
 * Request and response codes of the controller conversation (RocketMQ 5.x
 * {@code RequestCode} / {@code ResponseCode}), as plain numbers so that code compiled
 * against 4.x, whose classes lack them, can still speak of them.
 */
public final class ControllerCodes {
    public static final int BROKER_HEARTBEAT = 904;
    public static final int ALTER_SYNC_STATE_SET = 1001;
    public static final int ELECT_MASTER = 1002;
    public static final int REGISTER_BROKER = 1003;
    public static final int GET_REPLICA_INFO = 1004;
    public static final int GET_METADATA_INFO = 1005;
    public static final int GET_SYNC_STATE_DATA = 1006;
    public static final int NOTIFY_BROKER_ROLE_CHANGED = 1008;
    public static final int UPDATE_CONTROLLER_CONFIG = 1009;
    public static final int GET_CONTROLLER_CONFIG = 1010;
    public static final int CLEAN_BROKER_DATA = 1011;
    public static final int GET_NEXT_BROKER_ID = 1012;
    public static final int APPLY_BROKER_ID = 1013;

    public static final int SUCCESS = 0;
    public static final int SYSTEM_ERROR = 1;
    public static final int REQUEST_CODE_NOT_SUPPORTED = 3;
    public static final int NO_PERMISSION = 16;
    public static final int FENCED_MASTER_EPOCH = 2000;
    public static final int FENCED_SYNC_STATE_SET_EPOCH = 2001;
    public static final int INVALID_MASTER = 2002;
    public static final int INVALID_REPLICAS = 2003;
    public static final int MASTER_NOT_AVAILABLE = 2004;
    public static final int INVALID_REQUEST = 2005;
    public static final int BROKER_NOT_ALIVE = 2006;
    public static final int NOT_LEADER = 2007;
    public static final int BROKER_METADATA_NOT_EXIST = 2008;
    public static final int INVALID_CLEAN_BROKER_METADATA = 2009;
    public static final int BROKER_NEED_TO_BE_REGISTERED = 2010;
    public static final int MASTER_STILL_EXIST = 2011;
    public static final int ELECT_MASTER_FAILED = 2012;
    public static final int ALTER_SYNC_STATE_SET_FAILED = 2013;
    public static final int BROKER_ID_INVALID = 2014;

    private ControllerCodes() {
    }
}
