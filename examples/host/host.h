/* A planar vehicle host with drivegraph as its drivetrain (examples/host).
 *
 * The host owns the chassis — position x, y, yaw ψ, body-frame velocities
 * vx, vy and yaw rate r of a rigid body on a flat road, four wheels with
 * static and (one step late) longitudinal and lateral load transfer — and
 * its own combined-slip tyre (host_tyre). drivegraph owns the drivetrain:
 * engine, converter or clutch, gearbox, differentials and the four wheels'
 * spin, as `hub` blocks (examples/host/sedan_rwd_hubs.json,
 * awd_lsd_hubs.json). Each host step (host_step):
 *
 *   1. the contact-patch velocity of every wheel in its own heading (yaw
 *      rate and steering included) and its normal load go to the hub's
 *      inputs vx and fz;
 *   2. the host's tyre model, installed on every hub (dg_sim_set_tyre),
 *      gives the longitudinal force from the hub's slip, reduced by the
 *      lateral slip (combined slip), at every RK4 stage of the drivetrain's
 *      step: the wheel's spin and a stiff tyre are integrated together;
 *   3. the host reads each hub's fx and applies it, with its own lateral
 *      forces, drag and rolling resistance, to the chassis (Heun's method:
 *      the forces at the step's start and end).
 *
 * HOST_EXPLICIT is the other, one-step-late way (a graph whose wheels are
 * torque_source blocks, examples/host/sedan_rwd_explicit.json): the host
 * computes the tyre force at the step's start from the kinematic slip
 * (ωR − vx)/max(|vx|, 0.1 m/s) (its tyre without the relaxation: the
 * hub's slip in steady rolling) and holds the wheel torque −Fx·R over the
 * step. It is here to be compared,
 * and dg_sim_check_coupling refuses it for a stiff tyre (docs/host.md). */
#ifndef DRIVEGRAPH_EXAMPLE_HOST_H
#define DRIVEGRAPH_EXAMPLE_HOST_H

#include <drivegraph/drivegraph.h>
#include <stdbool.h>

#define HOST_WHEELS 4
enum { HOST_FL, HOST_FR, HOST_RL, HOST_RR };

/* The hub block's slip limit (blocks/hub.c): the relaxed slip κ is held
 * within ±1, and so is its rate at the limit. */
#define HOST_KAPPA_LIMIT 1.0

/* HOST_EXPLICIT's kinematic slip divides by max(|vx|, this) (m/s), as the
 * hub's slip_ratio signal. */
#define HOST_SLIP_MIN_SPEED 0.1

typedef enum host_coupling {
  HOST_HUB,      /* hub blocks: the tyre inside the drivetrain's step */
  HOST_EXPLICIT, /* torque_source blocks: the tyre once per host step */
} host_coupling;

/* The host's tyre, per wheel.
 *
 * Pure slip (Pacejka's magic formula, per unit load):
 *   Fx0 = Fz·MF(κ; B, C, D, E),   Fy0 = −Fz·MF(α; By, Cy, Dy, Ey),
 *   MF(x) = D·sin(C·atan(B·x − E·(B·x − atan(B·x)))),
 * κ the longitudinal slip (the hub's relaxed slip state: (ωR − vx)/|vx| in
 * steady rolling), α the slip angle: atan of a relaxed tan α,
 *   σy·d(tan α)/dt = vy − |vx|·tan α   (lateral relaxation length σy),
 * positive when the contact patch slides to the left; Fy is positive to
 * the left. D and Dy are the friction coefficients (split-µ: per wheel).
 * Tread damping, as drivegraph's wheel block and MF-Tyre's low-speed
 * damping: Fx0 += c·σ·dκ/dt with c = 2ζ·sqrt(kx·J)/R, kx = Fz·B·C·D/σ
 * (N/m), J and R the wheel's inertia and radius, σ the hub's relaxation
 * length; then Fx0 is kept within ±Fz·max|MF| (ζ = 0: no damping, no
 * clamp).
 * Combined slip (MF 5.2's weighting functions without shifts):
 *   Fx = Fx0·Gxα,  Gxα = cos(Cxa·atan(Bxa·α)),
 *   Fy = Fy0·Gyκ,  Gyκ = cos(Cyk·atan(Byk·κ)),
 * so that a wheel that slides sideways drives less and a spinning wheel
 * holds the road less. With α = 0 the longitudinal law is the pure magic
 * formula of drivegraph's wheel block (the same B, C, D, E, σ, ζ). */
typedef struct host_tyre {
  double B, C, D, E;         /* longitudinal magic formula */
  double By, Cy, Dy, Ey;     /* lateral magic formula (α in rad) */
  double Bxa, Cxa;           /* Gxα */
  double Byk, Cyk;           /* Gyκ */
  double relaxation_length;  /* σ (m): the hub's tyre.relaxation_length */
  double lateral_relaxation; /* σy (m) */
  double damping_ratio;      /* ζ of the tread damping */
} host_tyre;

/* B 10, C 1.9, D 1, E 0.97 (the wheel block's defaults), By 10, Cy 1.3,
 * Dy 1, Ey 0 (13·Fz per rad of cornering stiffness), Bxa 12, Cxa 1,
 * Byk 10, Cyk 1, σ 0.15 m, σy 0.3 m, ζ 1. */
void host_tyre_default(host_tyre *t);
/* MF(x) per unit load. */
double host_mf(double B, double C, double D, double E, double x);
/* max |MF| over 0 <= κ <= HOST_KAPPA_LIMIT (the longitudinal peak). */
double host_tyre_peak(const host_tyre *t);
/* The longitudinal force (N): κ, its rate (1/s), Fz (N), α (rad), the
 * wheel's inertia J (kg·m²) and radius R (m); `peak` = host_tyre_peak. */
double host_tyre_fx(const host_tyre *t, double peak, double kappa, double dkappa, double fz,
                    double alpha, double J, double R);
/* The lateral force (N, positive to the left) at slip angle α and slip κ. */
double host_tyre_fy(const host_tyre *t, double alpha, double kappa, double fz);
/* dκ/dt of the hub's relaxation at wheel speed ω, contact velocity vx,
 * held at the slip limit (blocks/hub.c's law). */
double host_slip_rate(double sigma, double omega, double R, double vx, double kappa);

/* The car: the chassis' numbers and, per wheel, the hub it drives, its
 * radius and inertia (those of the graph's hub, for the tread damping)
 * and its tyre. */
typedef struct host_car {
  double mass;               /* kg (the wheels' spin inertia is the drivetrain's) */
  double yaw_inertia;        /* kg·m² */
  double wheelbase, cg_to_front, cg_height, track_front, track_rear; /* m */
  double cda, air_density, rolling_resistance, gravity;
  const char *hub[HOST_WHEELS]; /* block ids, FL FR RL RR */
  double radius[HOST_WHEELS], inertia[HOST_WHEELS];
  host_tyre tyre[HOST_WHEELS];
} host_car;

/* graphs/sedan_rwd_automatic.json's body (1500 kg, wheelbase 2.8 m, CG
 * 1.2 m behind the front axle and 0.5 m high, tracks 1.55 m, cda 0.65,
 * rolling resistance 0.012) and wheels (R 0.32 m, J 1.3 rear, 1.0 front),
 * yaw inertia 2500 kg·m², the default tyre. */
void host_car_sedan(host_car *c);
/* graphs/awd_lsd.json's (1650 kg, 2.65 m, 1.25 m, 0.48 m, cda 0.62; R 0.33
 * m, J 1.2), yaw inertia 2800 kg·m². */
void host_car_awd(host_car *c);

/* Chassis state: position (m) and yaw (rad) on the road, velocities in the
 * body frame (x forward, y left; m/s) and yaw rate (rad/s, to the left). */
typedef struct host_state {
  double x, y, yaw, vx, vy, r;
} host_state;

typedef struct host_wheel {
  const host_tyre *tyre;
  double radius, inertia, peak;
  double pos_x, pos_y;   /* in the body frame (m) */
  double delta;          /* steering angle of the current step (rad) */
  double alpha;          /* slip angle the tyre model uses over the step (rad) */
  double ta;             /* relaxed tan α */
  double kappa;          /* HOST_EXPLICIT: the kinematic slip of the step's start */
  double vx, vy;         /* contact velocity in the wheel's frame, at the step's start */
  double vx_prev;        /* the same one step earlier */
  double vx0, vx_rate, t0; /* what the hub's vx follows over the step: vx0 + vx_rate·(t − t0) */
  double fz;             /* normal load of the step (N) */
  double fx, fy;         /* tyre forces in the wheel's frame at the step's end (N) */
  int in_vx, in_fz, in_torque; /* input (channel) indices */
  int sig_fx, sig_slip, sig_omega;
} host_wheel;

typedef struct host {
  host_car car;
  host_coupling coupling;
  dg_sim *sim;
  host_state s;
  host_wheel w[HOST_WHEELS];
  /* the driver, read at every step */
  double throttle, brake, steer; /* 0..1, 0..1, front wheel angle (rad, + left) */
  int gear;                      /* the gear input (automatics: >= 0 drives) */
  bool extrapolate; /* the hub's vx follows the last step's rate inside the step (default) */
  double ax, ay;    /* the last step's accelerations of the CG (load transfer) */
  bool stopped;     /* held at rest by the rolling resistance's static friction */
  int dir;          /* direction of travel for the rolling resistance */
  int in_throttle, in_brake, in_gear;
  long steps;
} host;

/* A host on the graph (which must outlive it): a new simulation, the car's
 * hubs found (their vx and fz channels, or for HOST_EXPLICIT the command
 * channel of the torque_source of the same id), the tyre model installed
 * on every hub, the car at rest at the origin with the driver's inputs
 * zero (gear 1), and dg_sim_start. DG_OK or an error in err. */
int host_init(host *h, const host_car *car, const dg_graph *g, host_coupling coupling,
              dg_error *err);
void host_free(host *h);
/* One host step of dt: the driver's inputs, the wheels' inputs, the
 * drivetrain's step, the chassis. DG_OK or the drivetrain's error. */
int host_step(host *h, double dt);
/* Normal loads for the accelerations ax, ay of the CG (as the vehicle
 * block: longitudinal transfer m·ax·h/L, lateral m·ay·h/track shared by
 * the axles in proportion to their static load; clamped at 0). */
void host_loads(const host_car *c, double ax, double ay, double fz[HOST_WHEELS]);

#endif
