
(define (problem plan_trial_T00002026_050001_000000)
    (:domain alfred)
    (:objects
        agent1 - agent
        Bowl_bar__plus_00_dot_40_bar__plus_00_dot_69_bar__minus_01_dot_20 - object
        SoapBottle_bar__minus_00_dot_52_bar__plus_00_dot_31_bar__plus_02_dot_37 - object
        Plate_bar__minus_00_dot_20_bar__plus_01_dot_02_bar__plus_00_dot_80 - object
        Mug_bar__minus_00_dot_35_bar__plus_01_dot_21_bar__minus_02_dot_55 - object
        Glassbottle_bar__minus_02_dot_95_bar__plus_00_dot_30_bar__plus_02_dot_68 - object
        Pen_bar__plus_01_dot_63_bar__plus_01_dot_22_bar__minus_02_dot_66 - object
        ButterKnife_bar__minus_00_dot_51_bar__plus_01_dot_56_bar__minus_00_dot_27 - object
        Pot_bar__minus_02_dot_57_bar__plus_01_dot_91_bar__plus_02_dot_64 - object
        PepperShaker_bar__minus_00_dot_06_bar__plus_00_dot_44_bar__minus_02_dot_97 - object
        BowlType - otype
        ButterKnifeType - otype
        GlassbottleType - otype
        MugType - otype
        PenType - otype
        PepperShakerType - otype
        PlateType - otype
        PotType - otype
        SoapBottleType - otype
        CabinetType - rtype
        CounterTopType - rtype
        DrawerType - rtype
        FridgeType - rtype
        GarbageCanType - rtype
        MicrowaveType - rtype
        SinkBasinType - rtype
        Cabinet_bar__plus_00_dot_49_bar__plus_02_dot_06_bar__minus_01_dot_69 - receptacle
        Cabinet_bar__plus_00_dot_83_bar__plus_00_dot_40_bar__minus_01_dot_39 - receptacle
        Cabinet_bar__plus_00_dot_86_bar__plus_00_dot_40_bar__plus_00_dot_67 - receptacle
        Cabinet_bar__plus_00_dot_86_bar__plus_00_dot_40_bar__minus_00_dot_55 - receptacle
        Cabinet_bar__plus_00_dot_86_bar__plus_00_dot_40_bar__minus_01_dot_37 - receptacle
        Cabinet_bar__plus_01_dot_16_bar__plus_02_dot_06_bar__minus_00_dot_34 - receptacle
        Cabinet_bar__plus_01_dot_16_bar__plus_02_dot_06_bar__minus_01_dot_02 - receptacle
        Cabinet_bar__minus_00_dot_19_bar__plus_02_dot_06_bar__minus_01_dot_69 - receptacle
        Cabinet_bar__minus_00_dot_20_bar__plus_00_dot_40_bar__minus_01_dot_39 - receptacle
        Cabinet_bar__minus_00_dot_24_bar__plus_00_dot_40_bar__minus_01_dot_39 - receptacle
        Cabinet_bar__minus_00_dot_69_bar__plus_00_dot_75_bar__minus_01_dot_39 - receptacle
        Cabinet_bar__minus_00_dot_82_bar__plus_00_dot_40_bar__minus_01_dot_39 - receptacle
        Cabinet_bar__minus_00_dot_82_bar__plus_02_dot_06_bar__minus_01_dot_69 - receptacle
        Cabinet_bar__minus_00_dot_87_bar__plus_02_dot_01_bar__minus_01_dot_69 - receptacle
        Cabinet_bar__minus_01_dot_61_bar__plus_02_dot_01_bar__minus_01_dot_69 - receptacle
        Cabinet_bar__minus_01_dot_66_bar__plus_02_dot_06_bar__minus_01_dot_68 - receptacle
        Cabinet_bar__minus_01_dot_67_bar__plus_00_dot_40_bar__minus_01_dot_39 - receptacle
        Cabinet_bar__minus_02_dot_24_bar__plus_00_dot_40_bar__minus_01_dot_39 - receptacle
        CounterTop_bar__plus_01_dot_17_bar__plus_00_dot_95_bar__minus_00_dot_65 - receptacle
        CounterTop_bar__plus_01_dot_50_bar__plus_01_dot_20_bar__minus_00_dot_66 - receptacle
        CounterTop_bar__minus_01_dot_97_bar__plus_00_dot_95_bar__minus_01_dot_71 - receptacle
        CounterTop_bar__minus_02_dot_10_bar__plus_00_dot_95_bar__plus_00_dot_29 - receptacle
        Drawer_bar__plus_00_dot_59_bar__plus_00_dot_75_bar__minus_01_dot_39 - receptacle
        Drawer_bar__plus_00_dot_86_bar__plus_00_dot_75_bar__plus_00_dot_43 - receptacle
        Drawer_bar__plus_00_dot_86_bar__plus_00_dot_75_bar__minus_00_dot_70 - receptacle
        Drawer_bar__plus_00_dot_87_bar__plus_00_dot_75_bar__minus_01_dot_14 - receptacle
        Drawer_bar__minus_00_dot_38_bar__plus_00_dot_75_bar__minus_01_dot_39 - receptacle
        Drawer_bar__minus_01_dot_80_bar__plus_00_dot_75_bar__minus_01_dot_39 - receptacle
        Drawer_bar__minus_02_dot_11_bar__plus_00_dot_75_bar__minus_01_dot_39 - receptacle
        Fridge_bar__plus_01_dot_42_bar__plus_00_dot_00_bar__plus_02_dot_10 - receptacle
        GarbageCan_bar__plus_01_dot_38_bar__plus_00_dot_00_bar__plus_01_dot_08 - receptacle
        Microwave_bar__plus_01_dot_42_bar__plus_01_dot_15_bar__plus_00_dot_02 - receptacle
        Sink_bar__plus_00_dot_16_bar__plus_00_dot_82_bar__minus_01_dot_80_bar_SinkBasin - receptacle
        loc_bar_0_bar_0_bar_0_bar_30 - location
        loc_bar_0_bar_0_bar_1_bar_30 - location
        loc_bar_0_bar__minus_1_bar_1_bar_30 - location
        loc_bar_0_bar__minus_3_bar_1_bar_30 - location
        loc_bar_1_bar_1_bar_1_bar_30 - location
        loc_bar_1_bar_7_bar_1_bar_30 - location
        loc_bar_1_bar__minus_2_bar_2_bar_30 - location
        loc_bar_1_bar__minus_4_bar_1_bar_30 - location
        loc_bar_1_bar__minus_4_bar_1_bar__minus_30 - location
        loc_bar_1_bar__minus_4_bar_2_bar__minus_30 - location
        loc_bar_2_bar_0_bar_1_bar_30 - location
        loc_bar_2_bar_9_bar_1_bar_0 - location
        loc_bar_2_bar__minus_2_bar_2_bar_30 - location
        loc_bar_2_bar__minus_3_bar_1_bar__minus_30 - location
        loc_bar_2_bar__minus_3_bar_2_bar__minus_30 - location
        loc_bar_2_bar__minus_4_bar_1_bar_0 - location
        loc_bar_2_bar__minus_4_bar_1_bar_30 - location
        loc_bar__minus_1_bar__minus_2_bar_2_bar_30 - location
        loc_bar__minus_1_bar__minus_4_bar_1_bar_30 - location
        loc_bar__minus_1_bar__minus_4_bar_2_bar_30 - location
        loc_bar__minus_2_bar__minus_4_bar_2_bar__minus_30 - location
        loc_bar__minus_3_bar__minus_2_bar_2_bar_30 - location
        loc_bar__minus_4_bar__minus_2_bar_2_bar_0 - location
        loc_bar__minus_4_bar__minus_3_bar_2_bar_30 - location
        loc_bar__minus_4_bar__minus_4_bar_1_bar_30 - location
        loc_bar__minus_5_bar__minus_2_bar_2_bar_0 - location
        loc_bar__minus_5_bar__minus_4_bar_3_bar_30 - location
        loc_bar__minus_6_bar__minus_2_bar_2_bar_30 - location
        loc_bar__minus_6_bar__minus_4_bar_3_bar_30 - location
        loc_bar__minus_8_bar__minus_2_bar_0_bar_30 - location
        loc_bar__minus_8_bar__minus_4_bar_2_bar_30 - location
        loc_bar__minus_8_bar__minus_4_bar_2_bar__minus_30 - location
        )
    (:init
        (atLocation agent1 loc_bar_0_bar_0_bar_0_bar_30)
        (receptacleType Cabinet_bar__plus_00_dot_49_bar__plus_02_dot_06_bar__minus_01_dot_69 CabinetType)
        (receptacleAtLocation Cabinet_bar__plus_00_dot_49_bar__plus_02_dot_06_bar__minus_01_dot_69 loc_bar_2_bar__minus_3_bar_2_bar__minus_30)
        (openable Cabinet_bar__plus_00_dot_49_bar__plus_02_dot_06_bar__minus_01_dot_69)
        (receptacleType Cabinet_bar__plus_00_dot_83_bar__plus_00_dot_40_bar__minus_01_dot_39 CabinetType)
        (receptacleAtLocation Cabinet_bar__plus_00_dot_83_bar__plus_00_dot_40_bar__minus_01_dot_39 loc_bar_1_bar__minus_2_bar_2_bar_30)
        (openable Cabinet_bar__plus_00_dot_83_bar__plus_00_dot_40_bar__minus_01_dot_39)
        (receptacleType Cabinet_bar__plus_00_dot_86_bar__plus_00_dot_40_bar__plus_00_dot_67 CabinetType)
        (receptacleAtLocation Cabinet_bar__plus_00_dot_86_bar__plus_00_dot_40_bar__plus_00_dot_67 loc_bar_0_bar_0_bar_1_bar_30)
        (openable Cabinet_bar__plus_00_dot_86_bar__plus_00_dot_40_bar__plus_00_dot_67)
        (receptacleType Cabinet_bar__plus_00_dot_86_bar__plus_00_dot_40_bar__minus_00_dot_55 CabinetType)
        (receptacleAtLocation Cabinet_bar__plus_00_dot_86_bar__plus_00_dot_40_bar__minus_00_dot_55 loc_bar_0_bar__minus_1_bar_1_bar_30)
        (openable Cabinet_bar__plus_00_dot_86_bar__plus_00_dot_40_bar__minus_00_dot_55)
        (receptacleType Cabinet_bar__plus_00_dot_86_bar__plus_00_dot_40_bar__minus_01_dot_37 CabinetType)
        (receptacleAtLocation Cabinet_bar__plus_00_dot_86_bar__plus_00_dot_40_bar__minus_01_dot_37 loc_bar_0_bar__minus_3_bar_1_bar_30)
        (openable Cabinet_bar__plus_00_dot_86_bar__plus_00_dot_40_bar__minus_01_dot_37)
        (receptacleType Cabinet_bar__plus_01_dot_16_bar__plus_02_dot_06_bar__minus_00_dot_34 CabinetType)
        (receptacleAtLocation Cabinet_bar__plus_01_dot_16_bar__plus_02_dot_06_bar__minus_00_dot_34 loc_bar_2_bar__minus_3_bar_1_bar__minus_30)
        (openable Cabinet_bar__plus_01_dot_16_bar__plus_02_dot_06_bar__minus_00_dot_34)
        (receptacleType Cabinet_bar__plus_01_dot_16_bar__plus_02_dot_06_bar__minus_01_dot_02 CabinetType)
        (receptacleAtLocation Cabinet_bar__plus_01_dot_16_bar__plus_02_dot_06_bar__minus_01_dot_02 loc_bar_1_bar__minus_4_bar_1_bar__minus_30)
        (openable Cabinet_bar__plus_01_dot_16_bar__plus_02_dot_06_bar__minus_01_dot_02)
        (receptacleType Cabinet_bar__minus_00_dot_19_bar__plus_02_dot_06_bar__minus_01_dot_69 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_00_dot_19_bar__plus_02_dot_06_bar__minus_01_dot_69 loc_bar_1_bar__minus_4_bar_2_bar__minus_30)
        (openable Cabinet_bar__minus_00_dot_19_bar__plus_02_dot_06_bar__minus_01_dot_69)
        (receptacleType Cabinet_bar__minus_00_dot_20_bar__plus_00_dot_40_bar__minus_01_dot_39 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_00_dot_20_bar__plus_00_dot_40_bar__minus_01_dot_39 loc_bar_2_bar__minus_2_bar_2_bar_30)
        (openable Cabinet_bar__minus_00_dot_20_bar__plus_00_dot_40_bar__minus_01_dot_39)
        (receptacleType Cabinet_bar__minus_00_dot_24_bar__plus_00_dot_40_bar__minus_01_dot_39 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_00_dot_24_bar__plus_00_dot_40_bar__minus_01_dot_39 loc_bar__minus_3_bar__minus_2_bar_2_bar_30)
        (openable Cabinet_bar__minus_00_dot_24_bar__plus_00_dot_40_bar__minus_01_dot_39)
        (receptacleType Cabinet_bar__minus_00_dot_69_bar__plus_00_dot_75_bar__minus_01_dot_39 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_00_dot_69_bar__plus_00_dot_75_bar__minus_01_dot_39 loc_bar__minus_4_bar__minus_3_bar_2_bar_30)
        (openable Cabinet_bar__minus_00_dot_69_bar__plus_00_dot_75_bar__minus_01_dot_39)
        (receptacleType Cabinet_bar__minus_00_dot_82_bar__plus_00_dot_40_bar__minus_01_dot_39 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_00_dot_82_bar__plus_00_dot_40_bar__minus_01_dot_39 loc_bar__minus_1_bar__minus_2_bar_2_bar_30)
        (openable Cabinet_bar__minus_00_dot_82_bar__plus_00_dot_40_bar__minus_01_dot_39)
        (receptacleType Cabinet_bar__minus_00_dot_82_bar__plus_02_dot_06_bar__minus_01_dot_69 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_00_dot_82_bar__plus_02_dot_06_bar__minus_01_dot_69 loc_bar__minus_2_bar__minus_4_bar_2_bar__minus_30)
        (openable Cabinet_bar__minus_00_dot_82_bar__plus_02_dot_06_bar__minus_01_dot_69)
        (receptacleType Cabinet_bar__minus_00_dot_87_bar__plus_02_dot_01_bar__minus_01_dot_69 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_00_dot_87_bar__plus_02_dot_01_bar__minus_01_dot_69 loc_bar__minus_5_bar__minus_2_bar_2_bar_0)
        (openable Cabinet_bar__minus_00_dot_87_bar__plus_02_dot_01_bar__minus_01_dot_69)
        (receptacleType Cabinet_bar__minus_01_dot_61_bar__plus_02_dot_01_bar__minus_01_dot_69 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_01_dot_61_bar__plus_02_dot_01_bar__minus_01_dot_69 loc_bar__minus_4_bar__minus_2_bar_2_bar_0)
        (openable Cabinet_bar__minus_01_dot_61_bar__plus_02_dot_01_bar__minus_01_dot_69)
        (receptacleType Cabinet_bar__minus_01_dot_66_bar__plus_02_dot_06_bar__minus_01_dot_68 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_01_dot_66_bar__plus_02_dot_06_bar__minus_01_dot_68 loc_bar__minus_8_bar__minus_4_bar_2_bar__minus_30)
        (openable Cabinet_bar__minus_01_dot_66_bar__plus_02_dot_06_bar__minus_01_dot_68)
        (receptacleType Cabinet_bar__minus_01_dot_67_bar__plus_00_dot_40_bar__minus_01_dot_39 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_01_dot_67_bar__plus_00_dot_40_bar__minus_01_dot_39 loc_bar__minus_6_bar__minus_2_bar_2_bar_30)
        (openable Cabinet_bar__minus_01_dot_67_bar__plus_00_dot_40_bar__minus_01_dot_39)
        (receptacleType Cabinet_bar__minus_02_dot_24_bar__plus_00_dot_40_bar__minus_01_dot_39 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_02_dot_24_bar__plus_00_dot_40_bar__minus_01_dot_39 loc_bar__minus_6_bar__minus_2_bar_2_bar_30)
        (openable Cabinet_bar__minus_02_dot_24_bar__plus_00_dot_40_bar__minus_01_dot_39)
        (receptacleType CounterTop_bar__plus_01_dot_17_bar__plus_00_dot_95_bar__minus_00_dot_65 CounterTopType)
        (receptacleAtLocation CounterTop_bar__plus_01_dot_17_bar__plus_00_dot_95_bar__minus_00_dot_65 loc_bar_2_bar__minus_4_bar_1_bar_30)
        (receptacleType CounterTop_bar__plus_01_dot_50_bar__plus_01_dot_20_bar__minus_00_dot_66 CounterTopType)
        (receptacleAtLocation CounterTop_bar__plus_01_dot_50_bar__plus_01_dot_20_bar__minus_00_dot_66 loc_bar_2_bar__minus_4_bar_1_bar_0)
        (receptacleType CounterTop_bar__minus_01_dot_97_bar__plus_00_dot_95_bar__minus_01_dot_71 CounterTopType)
        (receptacleAtLocation CounterTop_bar__minus_01_dot_97_bar__plus_00_dot_95_bar__minus_01_dot_71 loc_bar__minus_8_bar__minus_4_bar_2_bar_30)
        (receptacleType CounterTop_bar__minus_02_dot_10_bar__plus_00_dot_95_bar__plus_00_dot_29 CounterTopType)
        (receptacleAtLocation CounterTop_bar__minus_02_dot_10_bar__plus_00_dot_95_bar__plus_00_dot_29 loc_bar__minus_8_bar__minus_2_bar_0_bar_30)
        (receptacleType Drawer_bar__plus_00_dot_59_bar__plus_00_dot_75_bar__minus_01_dot_39 DrawerType)
        (receptacleAtLocation Drawer_bar__plus_00_dot_59_bar__plus_00_dot_75_bar__minus_01_dot_39 loc_bar__minus_1_bar__minus_4_bar_1_bar_30)
        (openable Drawer_bar__plus_00_dot_59_bar__plus_00_dot_75_bar__minus_01_dot_39)
        (receptacleType Drawer_bar__plus_00_dot_86_bar__plus_00_dot_75_bar__plus_00_dot_43 DrawerType)
        (receptacleAtLocation Drawer_bar__plus_00_dot_86_bar__plus_00_dot_75_bar__plus_00_dot_43 loc_bar_1_bar_1_bar_1_bar_30)
        (openable Drawer_bar__plus_00_dot_86_bar__plus_00_dot_75_bar__plus_00_dot_43)
        (receptacleType Drawer_bar__plus_00_dot_86_bar__plus_00_dot_75_bar__minus_00_dot_70 DrawerType)
        (receptacleAtLocation Drawer_bar__plus_00_dot_86_bar__plus_00_dot_75_bar__minus_00_dot_70 loc_bar_1_bar__minus_4_bar_1_bar_30)
        (openable Drawer_bar__plus_00_dot_86_bar__plus_00_dot_75_bar__minus_00_dot_70)
        (receptacleType Drawer_bar__plus_00_dot_87_bar__plus_00_dot_75_bar__minus_01_dot_14 DrawerType)
        (receptacleAtLocation Drawer_bar__plus_00_dot_87_bar__plus_00_dot_75_bar__minus_01_dot_14 loc_bar_0_bar__minus_3_bar_1_bar_30)
        (openable Drawer_bar__plus_00_dot_87_bar__plus_00_dot_75_bar__minus_01_dot_14)
        (receptacleType Drawer_bar__minus_00_dot_38_bar__plus_00_dot_75_bar__minus_01_dot_39 DrawerType)
        (receptacleAtLocation Drawer_bar__minus_00_dot_38_bar__plus_00_dot_75_bar__minus_01_dot_39 loc_bar__minus_4_bar__minus_4_bar_1_bar_30)
        (openable Drawer_bar__minus_00_dot_38_bar__plus_00_dot_75_bar__minus_01_dot_39)
        (receptacleType Drawer_bar__minus_01_dot_80_bar__plus_00_dot_75_bar__minus_01_dot_39 DrawerType)
        (receptacleAtLocation Drawer_bar__minus_01_dot_80_bar__plus_00_dot_75_bar__minus_01_dot_39 loc_bar__minus_5_bar__minus_4_bar_3_bar_30)
        (openable Drawer_bar__minus_01_dot_80_bar__plus_00_dot_75_bar__minus_01_dot_39)
        (receptacleType Drawer_bar__minus_02_dot_11_bar__plus_00_dot_75_bar__minus_01_dot_39 DrawerType)
        (receptacleAtLocation Drawer_bar__minus_02_dot_11_bar__plus_00_dot_75_bar__minus_01_dot_39 loc_bar__minus_6_bar__minus_4_bar_3_bar_30)
        (openable Drawer_bar__minus_02_dot_11_bar__plus_00_dot_75_bar__minus_01_dot_39)
        (receptacleType Fridge_bar__plus_01_dot_42_bar__plus_00_dot_00_bar__plus_02_dot_10 FridgeType)
        (receptacleAtLocation Fridge_bar__plus_01_dot_42_bar__plus_00_dot_00_bar__plus_02_dot_10 loc_bar_2_bar_9_bar_1_bar_0)
        (openable Fridge_bar__plus_01_dot_42_bar__plus_00_dot_00_bar__plus_02_dot_10)
        (receptacleType GarbageCan_bar__plus_01_dot_38_bar__plus_00_dot_00_bar__plus_01_dot_08 GarbageCanType)
        (receptacleAtLocation GarbageCan_bar__plus_01_dot_38_bar__plus_00_dot_00_bar__plus_01_dot_08 loc_bar_1_bar_7_bar_1_bar_30)
        (receptacleType Microwave_bar__plus_01_dot_42_bar__plus_01_dot_15_bar__plus_00_dot_02 MicrowaveType)
        (receptacleAtLocation Microwave_bar__plus_01_dot_42_bar__plus_01_dot_15_bar__plus_00_dot_02 loc_bar_2_bar_0_bar_1_bar_30)
        (openable Microwave_bar__plus_01_dot_42_bar__plus_01_dot_15_bar__plus_00_dot_02)
        (receptacleType Sink_bar__plus_00_dot_16_bar__plus_00_dot_82_bar__minus_01_dot_80_bar_SinkBasin SinkBasinType)
        (receptacleAtLocation Sink_bar__plus_00_dot_16_bar__plus_00_dot_82_bar__minus_01_dot_80_bar_SinkBasin loc_bar__minus_1_bar__minus_4_bar_2_bar_30)
        (canContain CabinetType BowlType)
        (canContain CabinetType GlassbottleType)
        (canContain CabinetType MugType)
        (canContain CabinetType PepperShakerType)
        (canContain CabinetType PlateType)
        (canContain CabinetType PotType)
        (canContain CabinetType SoapBottleType)
        (canContain CounterTopType BowlType)
        (canContain CounterTopType ButterKnifeType)
        (canContain CounterTopType GlassbottleType)
        (canContain CounterTopType MugType)
        (canContain CounterTopType PenType)
        (canContain CounterTopType PepperShakerType)
        (canContain CounterTopType PlateType)
        (canContain CounterTopType PotType)
        (canContain CounterTopType SoapBottleType)
        (canContain DrawerType ButterKnifeType)
        (canContain DrawerType PenType)
        (canContain DrawerType PepperShakerType)
        (canContain DrawerType SoapBottleType)
        (canContain FridgeType BowlType)
        (canContain FridgeType GlassbottleType)
        (canContain FridgeType MugType)
        (canContain FridgeType PlateType)
        (canContain FridgeType PotType)
        (canContain GarbageCanType PenType)
        (canContain GarbageCanType SoapBottleType)
        (canContain MicrowaveType BowlType)
        (canContain MicrowaveType GlassbottleType)
        (canContain MicrowaveType MugType)
        (canContain MicrowaveType PlateType)
        (canContain SinkBasinType BowlType)
        (canContain SinkBasinType ButterKnifeType)
        (canContain SinkBasinType GlassbottleType)
        (canContain SinkBasinType MugType)
        (canContain SinkBasinType PlateType)
        (canContain SinkBasinType PotType)
        (objectType Bowl_bar__plus_00_dot_40_bar__plus_00_dot_69_bar__minus_01_dot_20 BowlType)
        (inReceptacle Bowl_bar__plus_00_dot_40_bar__plus_00_dot_69_bar__minus_01_dot_20 Cabinet_bar__plus_00_dot_86_bar__plus_00_dot_40_bar__minus_01_dot_37)
        (objectAtLocation Bowl_bar__plus_00_dot_40_bar__plus_00_dot_69_bar__minus_01_dot_20 loc_bar_0_bar__minus_3_bar_1_bar_30)
        (pickupable Bowl_bar__plus_00_dot_40_bar__plus_00_dot_69_bar__minus_01_dot_20)
        (isReceptacleObject Bowl_bar__plus_00_dot_40_bar__plus_00_dot_69_bar__minus_01_dot_20)
        (cleanable Bowl_bar__plus_00_dot_40_bar__plus_00_dot_69_bar__minus_01_dot_20)
        (coolable Bowl_bar__plus_00_dot_40_bar__plus_00_dot_69_bar__minus_01_dot_20)
        (objectType SoapBottle_bar__minus_00_dot_52_bar__plus_00_dot_31_bar__plus_02_dot_37 SoapBottleType)
        (inReceptacle SoapBottle_bar__minus_00_dot_52_bar__plus_00_dot_31_bar__plus_02_dot_37 Cabinet_bar__minus_01_dot_66_bar__plus_02_dot_06_bar__minus_01_dot_68)
        (objectAtLocation SoapBottle_bar__minus_00_dot_52_bar__plus_00_dot_31_bar__plus_02_dot_37 loc_bar__minus_8_bar__minus_4_bar_2_bar__minus_30)
        (pickupable SoapBottle_bar__minus_00_dot_52_bar__plus_00_dot_31_bar__plus_02_dot_37)
        (objectType Plate_bar__minus_00_dot_20_bar__plus_01_dot_02_bar__plus_00_dot_80 PlateType)
        (inReceptacle Plate_bar__minus_00_dot_20_bar__plus_01_dot_02_bar__plus_00_dot_80 Cabinet_bar__minus_00_dot_19_bar__plus_02_dot_06_bar__minus_01_dot_69)
        (objectAtLocation Plate_bar__minus_00_dot_20_bar__plus_01_dot_02_bar__plus_00_dot_80 loc_bar_1_bar__minus_4_bar_2_bar__minus_30)
        (pickupable Plate_bar__minus_00_dot_20_bar__plus_01_dot_02_bar__plus_00_dot_80)
        (isReceptacleObject Plate_bar__minus_00_dot_20_bar__plus_01_dot_02_bar__plus_00_dot_80)
        (cleanable Plate_bar__minus_00_dot_20_bar__plus_01_dot_02_bar__plus_00_dot_80)
        (heatable Plate_bar__minus_00_dot_20_bar__plus_01_dot_02_bar__plus_00_dot_80)
        (coolable Plate_bar__minus_00_dot_20_bar__plus_01_dot_02_bar__plus_00_dot_80)
        (objectType Mug_bar__minus_00_dot_35_bar__plus_01_dot_21_bar__minus_02_dot_55 MugType)
        (inReceptacle Mug_bar__minus_00_dot_35_bar__plus_01_dot_21_bar__minus_02_dot_55 Cabinet_bar__minus_00_dot_82_bar__plus_00_dot_40_bar__minus_01_dot_39)
        (objectAtLocation Mug_bar__minus_00_dot_35_bar__plus_01_dot_21_bar__minus_02_dot_55 loc_bar__minus_1_bar__minus_2_bar_2_bar_30)
        (pickupable Mug_bar__minus_00_dot_35_bar__plus_01_dot_21_bar__minus_02_dot_55)
        (isReceptacleObject Mug_bar__minus_00_dot_35_bar__plus_01_dot_21_bar__minus_02_dot_55)
        (cleanable Mug_bar__minus_00_dot_35_bar__plus_01_dot_21_bar__minus_02_dot_55)
        (heatable Mug_bar__minus_00_dot_35_bar__plus_01_dot_21_bar__minus_02_dot_55)
        (coolable Mug_bar__minus_00_dot_35_bar__plus_01_dot_21_bar__minus_02_dot_55)
        (objectType Glassbottle_bar__minus_02_dot_95_bar__plus_00_dot_30_bar__plus_02_dot_68 GlassbottleType)
        (inReceptacle Glassbottle_bar__minus_02_dot_95_bar__plus_00_dot_30_bar__plus_02_dot_68 Sink_bar__plus_00_dot_16_bar__plus_00_dot_82_bar__minus_01_dot_80_bar_SinkBasin)
        (objectAtLocation Glassbottle_bar__minus_02_dot_95_bar__plus_00_dot_30_bar__plus_02_dot_68 loc_bar__minus_1_bar__minus_4_bar_2_bar_30)
        (pickupable Glassbottle_bar__minus_02_dot_95_bar__plus_00_dot_30_bar__plus_02_dot_68)
        (objectType Pen_bar__plus_01_dot_63_bar__plus_01_dot_22_bar__minus_02_dot_66 PenType)
        (inReceptacle Pen_bar__plus_01_dot_63_bar__plus_01_dot_22_bar__minus_02_dot_66 Drawer_bar__minus_01_dot_80_bar__plus_00_dot_75_bar__minus_01_dot_39)
        (objectAtLocation Pen_bar__plus_01_dot_63_bar__plus_01_dot_22_bar__minus_02_dot_66 loc_bar__minus_5_bar__minus_4_bar_3_bar_30)
        (pickupable Pen_bar__plus_01_dot_63_bar__plus_01_dot_22_bar__minus_02_dot_66)
        (objectType ButterKnife_bar__minus_00_dot_51_bar__plus_01_dot_56_bar__minus_00_dot_27 ButterKnifeType)
        (inReceptacle ButterKnife_bar__minus_00_dot_51_bar__plus_01_dot_56_bar__minus_00_dot_27 Drawer_bar__minus_02_dot_11_bar__plus_00_dot_75_bar__minus_01_dot_39)
        (objectAtLocation ButterKnife_bar__minus_00_dot_51_bar__plus_01_dot_56_bar__minus_00_dot_27 loc_bar__minus_6_bar__minus_4_bar_3_bar_30)
        (pickupable ButterKnife_bar__minus_00_dot_51_bar__plus_01_dot_56_bar__minus_00_dot_27)
        (cleanable ButterKnife_bar__minus_00_dot_51_bar__plus_01_dot_56_bar__minus_00_dot_27)
        (objectType Pot_bar__minus_02_dot_57_bar__plus_01_dot_91_bar__plus_02_dot_64 PotType)
        (inReceptacle Pot_bar__minus_02_dot_57_bar__plus_01_dot_91_bar__plus_02_dot_64 Cabinet_bar__plus_00_dot_86_bar__plus_00_dot_40_bar__minus_01_dot_37)
        (objectAtLocation Pot_bar__minus_02_dot_57_bar__plus_01_dot_91_bar__plus_02_dot_64 loc_bar_0_bar__minus_3_bar_1_bar_30)
        (pickupable Pot_bar__minus_02_dot_57_bar__plus_01_dot_91_bar__plus_02_dot_64)
        (isReceptacleObject Pot_bar__minus_02_dot_57_bar__plus_01_dot_91_bar__plus_02_dot_64)
        (cleanable Pot_bar__minus_02_dot_57_bar__plus_01_dot_91_bar__plus_02_dot_64)
        (coolable Pot_bar__minus_02_dot_57_bar__plus_01_dot_91_bar__plus_02_dot_64)
        (objectType PepperShaker_bar__minus_00_dot_06_bar__plus_00_dot_44_bar__minus_02_dot_97 PepperShakerType)
        (inReceptacle PepperShaker_bar__minus_00_dot_06_bar__plus_00_dot_44_bar__minus_02_dot_97 Drawer_bar__plus_00_dot_59_bar__plus_00_dot_75_bar__minus_01_dot_39)
        (objectAtLocation PepperShaker_bar__minus_00_dot_06_bar__plus_00_dot_44_bar__minus_02_dot_97 loc_bar__minus_1_bar__minus_4_bar_1_bar_30)
        (pickupable PepperShaker_bar__minus_00_dot_06_bar__plus_00_dot_44_bar__minus_02_dot_97)
        )

        (:goal
            (and
                (exists (?r - receptacle)
                    (exists (?o - object)
                        (and
                            (coolable ?o)
                            (objectType ?o BowlType)
                            (receptacleType ?r CounterTopType)
                            (isCool ?o)
                            (inReceptacle ?o ?r)
                        )
                    )
                )
            )
        )
    )
    
